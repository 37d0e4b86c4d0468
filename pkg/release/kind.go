package release

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Meta is what the reconciler knows of a kind without calling it.
type Meta struct {
	// GVK of the custom resource.
	GVK schema.GroupVersionKind
	// NewObject and NewList return an empty typed object and list of the kind.
	NewObject func() client.Object
	NewList   func() client.ObjectList
	// Chart is the embedded chart (charts/<Chart>) that renders the kind.
	Chart string
	// ReleasePrefix starts the names of the kind's Helm releases; changing
	// it orphans every release that exists.
	ReleasePrefix string
	// RelatedImages are the images the kind deploys by default, by the
	// name of the RELATED_IMAGE_ variable that overrides each (the CSV's
	// relatedImages and the Deployment's environment are made of them).
	RelatedImages map[string]string
	// OwnedTypes are the kinds of object the chart renders that the operator
	// watches; they are cached by LabelManaged and reconcile their owner.
	OwnedTypes []client.Object
	// OptionalAPIs are the APIs the kind's chart renders into, or detects,
	// when the cluster serves them (Route, ServiceMonitor, OpenShift's SCC).
	OptionalAPIs []schema.GroupVersionKind
	// WarningConditions are the condition types (besides Reconciled) whose
	// turn to False, from the start too, is a Warning event, and whose
	// recovery a Normal one. Other conditions emit no events, but Ready's
	// changes.
	WarningConditions []string
	// CreatedEvents name, by kind, an event emitted on install for each
	// object of that kind the release creates (upstream operators' reasons,
	// such as TrustyAI's PVCCreated). They stand in for the Installed event
	// when the release creates any: one install, one event, in the reasons
	// upstream's users already watch for.
	CreatedEvents map[string]string
	// NamespaceWatches are the objects, not rendered by the chart, that the
	// kind's CRs act on (model servers): they are watched as metadata, and a
	// change reconciles every CR of the kind in the object's namespace, as
	// does a CR's deletion; a change of a cluster-scoped one (a Namespace)
	// reconciles every CR of the kind.
	NamespaceWatches []NamespaceWatch
	// OutsideTypes are the kinds of object the kind writes outside its Helm
	// release (a proxy's ClusterRoleBinding, an EvalHub's grants), each
	// labelled with LabelManaged and its CR's LabelOwnerKind,
	// LabelOwnerNamespace and LabelOwnerUID: the sweeper deletes those whose
	// CR is gone (a finalizer removed by hand, a CR deleted while the
	// operator was down) and, for a Reacher, those in a namespace the CR no
	// longer reaches, whether or not the CR's own reconcile runs.
	OutsideTypes []schema.GroupVersionKind
	// UpstreamLabels are the labels the upstream operator of the kind selects
	// its objects by (its manager's cache sees no other): `manager
	// switch-back` sets them on the CR's objects, so that the upstream
	// operator, started again, finds them. Nil for an upstream that selects
	// nothing.
	UpstreamLabels map[string]string
}

// NamespaceWatch is one kind of object a kind's CRs act on.
type NamespaceWatch struct {
	// GVK of the objects. One listed in Meta.OptionalAPIs is watched from the
	// moment the cluster serves it, without a restart.
	GVK schema.GroupVersionKind
	// Labels, when set, limit the watch to the objects that carry them,
	// through a metadata cache of their own (the manager's cache of a kind
	// the chart renders holds only the operator's objects).
	Labels map[string]string
	// Selector, when set, is a label selector ("key" for a key's presence)
	// that limits the watch as Labels do; Labels are ignored then.
	Selector string
}

// Kind adapts one custom resource kind to the generic release reconciler.
// O is the kind's typed object, I what Gather reads for one CR.
type Kind[O client.Object, I any] interface {
	// Meta describes the kind.
	Meta() Meta
	// Gather reads what the translation needs besides the CR (read-only).
	// A *status.Failure in the error chain is reported on the CR and waits
	// for a change; any other error is retried with backoff.
	Gather(ctx context.Context, obj O) (I, error)
	// Values translates the CR and its inputs into chart values; a
	// *status.Failure is an invalid spec.
	Values(obj O, in I) (map[string]any, error)
	// Status computes the CR's status in place from the observation. in is
	// the zero I when Gather failed or the CR is being deleted.
	Status(ctx context.Context, obj O, in I, obs Observation) error
	// Conditions returns the CR's status conditions.
	Conditions(obj O) []metav1.Condition
}

// Preparer is implemented by kinds that write objects of their own, outside
// the Helm release (a merged CA bundle).
type Preparer[O client.Object, I any] interface {
	// Prepare runs after Values succeeded and before the chart is applied.
	Prepare(ctx context.Context, obj O, in I) error
	// Cleanup runs when the CR is deleted, after the release is uninstalled.
	Cleanup(ctx context.Context, obj O) error
}

// Finisher is implemented by kinds that write, outside Helm, what must not
// be written for a CR whose release was refused: bindings of its
// ServiceAccount, other controllers' objects pointed at its Service. Finish
// runs after the release's objects passed the gate (the ownership of every
// name) and are applied, or found in sync; never after a NameConflict or
// another failure. A Preparer's Prepare writes only what the chart mounts.
// What Finish writes goes in the Preparer's Cleanup. What Finish returns
// reaches Status as Observation.Finished.
type Finisher[O client.Object, I any] interface {
	Finish(ctx context.Context, obj O, in I) (any, error)
}

// ConfigMapReader is implemented by kinds whose CRs read ConfigMaps that the
// operator does not own: the reconciler watches ConfigMaps as metadata only
// and maps a change to the CRs that list it.
type ConfigMapReader[O client.Object] interface {
	// ConfigMapRefs are "namespace/name" of the ConfigMaps the CR reads.
	ConfigMapRefs(obj O) []string
	// SharedConfigMaps are "namespace/name" of ConfigMaps every CR reads (the
	// operator's settings): a change reconciles every CR of the kind.
	SharedConfigMaps() []string
}

// Offline is implemented by kinds that `render` (cmd/render) can render without
// a cluster, for a cluster with the given capabilities.
type Offline[O client.Object, I any] interface {
	OfflineInputs(obj O, caps Capabilities) (I, error)
}

// Rechecker is implemented by kinds whose status depends on what no watch
// of the operator sees (a Route's admission by a router, a Secret that is
// only looked up by name): Recheck, after the status is computed, says how
// soon to reconcile again (0: at the reconcile period).
type Rechecker[O client.Object] interface {
	Recheck(obj O) time.Duration
}

// Reacher is implemented by kinds whose CRs write into namespaces besides
// their own (EvalHub's tenants): Reaches is the namespaces the CR may hold
// objects of its OutsideTypes in now, besides its own. The sweeper deletes
// the CR's objects elsewhere.
type Reacher[O client.Object] interface {
	Reaches(ctx context.Context, obj O) ([]string, error)
}

// Backoff is how soon to look again at something unwatched that has been
// waited for so long: 10 s at first, then as long as it has waited, at most
// 10 minutes (the reconcile period). A wait that never ends (a Route on a
// cluster without a router) then costs a look every 10 minutes, not every
// 10 s.
func Backoff(waited time.Duration) time.Duration {
	return min(max(waited, 10*time.Second), 10*time.Minute)
}

// Observation is what the reconciler learned in one pass, for Status.
type Observation struct {
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *status.Failure
	// Applied is true when a release exists (now or from an earlier spec).
	Applied bool
	// Objects are the objects of the release's manifest, sorted by kind and name.
	Objects []ObjectRef
	// Now stamps condition transitions.
	Now metav1.Time
	// Deleting is true while the CR's deletion waits for the uninstall.
	Deleting bool
	// Finished is what the kind's Finish returned in this pass; nil when it
	// did not run (a failure before it, or a kind that is no Finisher).
	Finished any
}

// ObjectRef names one object of a release.
type ObjectRef struct {
	Kind, Name string
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

// Registered is a kind in the form the reconciler and the registry hold:
// the one place where client.Object meets the kind's own types.
type Registered interface {
	Meta() Meta
	Gather(ctx context.Context, obj client.Object) (any, error)
	Values(obj client.Object, in any) (map[string]any, error)
	Status(ctx context.Context, obj client.Object, in any, obs Observation) error
	Conditions(obj client.Object) []metav1.Condition
	// Prepare and Cleanup do nothing for a kind that is no Preparer.
	Prepare(ctx context.Context, obj client.Object, in any) error
	Cleanup(ctx context.Context, obj client.Object) error
	// Finish does nothing for a kind that is no Finisher.
	Finish(ctx context.Context, obj client.Object, in any) (any, error)
	// ConfigMapReader returns the kind's ConfigMap references; ok is false
	// for a kind that reads none.
	ConfigMapReader() (refs func(client.Object) []string, shared []string, ok bool)
	// OfflineInputs fails for a kind that is no Offline.
	OfflineInputs(obj client.Object, caps Capabilities) (any, error)
	// Recheck is 0 for a kind that is no Rechecker.
	Recheck(obj client.Object) time.Duration
	// Reaches are the namespaces besides its own where the CR may hold
	// objects; ok is false for a kind that is no Reacher.
	Reaches(ctx context.Context, obj client.Object) (namespaces []string, ok bool, err error)
}

// Register wraps a typed kind for the registry.
func Register[O client.Object, I any](k Kind[O, I]) Registered { return adapter[O, I]{k: k} }

type adapter[O client.Object, I any] struct{ k Kind[O, I] }

func (a adapter[O, I]) Meta() Meta { return a.k.Meta() }

func (a adapter[O, I]) object(obj client.Object) O {
	o, ok := obj.(O)
	if !ok {
		// A registry bug, not a user's: the reconciler only hands a kind its own objects.
		panic(fmt.Sprintf("kind %s got a %T", a.k.Meta().GVK.Kind, obj))
	}
	return o
}

// inputs are the kind's own inputs, the zero I when there are none.
func (a adapter[O, I]) inputs(in any) I {
	v, _ := in.(I)
	return v
}

func (a adapter[O, I]) Gather(ctx context.Context, obj client.Object) (any, error) {
	return a.k.Gather(ctx, a.object(obj))
}

func (a adapter[O, I]) Values(obj client.Object, in any) (map[string]any, error) {
	return a.k.Values(a.object(obj), a.inputs(in))
}

func (a adapter[O, I]) Status(ctx context.Context, obj client.Object, in any, obs Observation) error {
	return a.k.Status(ctx, a.object(obj), a.inputs(in), obs)
}

func (a adapter[O, I]) Conditions(obj client.Object) []metav1.Condition {
	return a.k.Conditions(a.object(obj))
}

func (a adapter[O, I]) Prepare(ctx context.Context, obj client.Object, in any) error {
	if p, ok := a.k.(Preparer[O, I]); ok {
		return p.Prepare(ctx, a.object(obj), a.inputs(in))
	}
	return nil
}

func (a adapter[O, I]) Cleanup(ctx context.Context, obj client.Object) error {
	if p, ok := a.k.(Preparer[O, I]); ok {
		return p.Cleanup(ctx, a.object(obj))
	}
	return nil
}

func (a adapter[O, I]) Finish(ctx context.Context, obj client.Object, in any) (any, error) {
	if f, ok := a.k.(Finisher[O, I]); ok {
		return f.Finish(ctx, a.object(obj), a.inputs(in))
	}
	return nil, nil
}

func (a adapter[O, I]) ConfigMapReader() (func(client.Object) []string, []string, bool) {
	r, ok := a.k.(ConfigMapReader[O])
	if !ok {
		return nil, nil, false
	}
	return func(obj client.Object) []string {
		o, ok := obj.(O)
		if !ok {
			return nil
		}
		return r.ConfigMapRefs(o)
	}, r.SharedConfigMaps(), true
}

func (a adapter[O, I]) Recheck(obj client.Object) time.Duration {
	if r, ok := a.k.(Rechecker[O]); ok {
		return r.Recheck(a.object(obj))
	}
	return 0
}

func (a adapter[O, I]) Reaches(ctx context.Context, obj client.Object) ([]string, bool, error) {
	r, ok := a.k.(Reacher[O])
	if !ok {
		return nil, false, nil
	}
	ns, err := r.Reaches(ctx, a.object(obj))
	return ns, true, err
}

func (a adapter[O, I]) OfflineInputs(obj client.Object, caps Capabilities) (any, error) {
	off, ok := a.k.(Offline[O, I])
	if !ok {
		return nil, fmt.Errorf("%s cannot be rendered offline", a.k.Meta().GVK.Kind)
	}
	return off.OfflineInputs(a.object(obj), caps)
}
