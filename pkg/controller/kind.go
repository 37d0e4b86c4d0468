package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Kind adapts one custom resource kind to the generic release reconciler.
type Kind interface {
	// GroupVersionKind of the custom resource.
	GroupVersionKind() schema.GroupVersionKind
	// NewObject returns an empty typed object of the kind.
	NewObject() client.Object
	// ReleasePrefix starts the names of this kind's Helm releases.
	ReleasePrefix() string
	// OwnedTypes are the kinds of object the chart renders that the operator
	// watches; they are cached by the operator's label (LabelManaged) and
	// trigger reconciles of their owner.
	OwnedTypes() []client.Object
	// Gather reads what the translation needs besides the CR (read-only).
	// Errors with a Reason() are reported on the CR; others are retried.
	Gather(ctx context.Context, reader client.Reader, obj client.Object) (any, error)
	// OfflineInputs are the inputs for an offline render, for a cluster that
	// serves the given extra API versions.
	OfflineInputs(apiVersions []string) (any, error)
	// Values translates the CR into chart values. Errors the user must fix in
	// the CR have a Reason() (values.FieldError).
	Values(obj client.Object, inputs any) (map[string]any, error)
	// Conditions returns the CR's status conditions.
	Conditions(obj client.Object) []metav1.Condition
	// SetStatus computes the CR's status in place from the observation; it may
	// read the rendered objects through reader (the label-limited cache).
	// inputs is nil when Gather failed.
	SetStatus(ctx context.Context, reader client.Reader, obj client.Object, inputs any, obs Observation) error
}

// Observation is what the reconciler learned in one pass, for SetStatus.
type Observation struct {
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *status.Failure
	// Applied is true when a release exists (now or from an earlier spec).
	Applied bool
	// Objects are the objects of the release's manifest, by kind.
	Objects []ObjectRef
	// Now stamps condition transitions.
	Now metav1.Time
}

// ObjectRef names one object of a release.
type ObjectRef struct {
	APIVersion, Kind, Name string
}

// Find returns the name of the first object of the kind, or "".
func (o Observation) Find(kind string) string {
	for _, r := range o.Objects {
		if r.Kind == kind {
			return r.Name
		}
	}
	return ""
}
