package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Kind adapts one custom resource kind to the generic release reconciler.
type Kind interface {
	// GroupVersionKind of the custom resource.
	GroupVersionKind() schema.GroupVersionKind
	// NewObject returns an empty typed object of the kind.
	NewObject() client.Object
	// NewList returns an empty typed list of the kind.
	NewList() client.ObjectList
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

// Preparer is implemented by kinds that write objects of their own, outside
// the Helm release (the merged CA bundle).
type Preparer interface {
	// Prepare runs after Values succeeded and before the chart is applied.
	Prepare(ctx context.Context, c client.Client, rec record.EventRecorder, obj client.Object, inputs any) error
	// Cleanup runs when the CR is deleted, after the release is uninstalled.
	Cleanup(ctx context.Context, c client.Client, obj client.Object) error
}

// ConfigMapReferrer is implemented by kinds whose CRs read ConfigMaps that the
// operator does not own: the reconciler watches ConfigMaps as metadata only
// and maps a change to the CRs that list it here.
type ConfigMapReferrer interface {
	// ConfigMapRefs are "namespace/name" of the ConfigMaps the CR reads.
	ConfigMapRefs(obj client.Object) []string
	// SharedConfigMaps are "namespace/name" of ConfigMaps every CR reads (the
	// operator's settings): a change reconciles every CR of the kind.
	SharedConfigMaps() []string
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
	// Deleting is true while the CR's deletion waits for the uninstall.
	Deleting bool
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
