package release

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	libhandler "github.com/operator-framework/operator-lib/handler"
	"helm.sh/helm/v4/pkg/chart/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// ManagedBy names the operator in events, descriptions and field managers.
	ManagedBy = helm.ManagedBy
	// LabelManaged ("true") marks every object the operator renders and every
	// release record (a ConfigMap); the operator's caches select on it. (Helm itself sets
	// app.kubernetes.io/managed-by=Helm on every object it applies, so that
	// label cannot be ours.)
	LabelManaged = "ai-stack-operator.io/managed"
	// Finalizer makes deletion of a CR wait for its release's uninstall.
	Finalizer = "ai-stack-operator.io/uninstall"
	// LabelChartDigest on a release records the digest of the chart it was rendered from.
	LabelChartDigest = "ai-stack-operator.io/chart-digest"
	// LabelOwnerKind, LabelOwnerNamespace and LabelOwnerUID on a release
	// record name its CR (CR names can be longer than a label value).
	LabelOwnerKind      = helm.LabelOwnerKind
	LabelOwnerNamespace = helm.LabelOwnerNamespace
	LabelOwnerUID       = helm.LabelOwnerUID
	// LabelOwnerName on a release record is its CR's name, when it fits a label value.
	LabelOwnerName = helm.LabelOwnerName
)

// Reconciler reconciles one kind through its embedded chart: install,
// upgrade only when the values or the chart changed, drift repair otherwise,
// uninstall on deletion, and a status of the kind's own.
type Reconciler struct {
	client      client.Client
	kind        Registered
	meta        Meta
	chart       *charts.Chart
	schema      *helm.ValuesSchema
	releases    *helm.Factory
	recorder    record.EventRecorder
	maxHistory  int
	period      time.Duration
	grace       time.Duration
	concurrency int
	now         func() metav1.Time
	helmCaps    func() (*common.Capabilities, error)
	caps        func() (Capabilities, error)
	capsPeriod  time.Duration
	namespaces  []string

	// The caches (caches.go): the values the API server refused, the
	// statuses written, the object lists of the last manifests.
	refusals  refusalCache
	statuses  statusCache
	manifests manifestCache
	drift     driftCache
	// partial are the owned types the cache holds partly; fullCopies the
	// others, by kind.
	partial    []client.Object
	fullCopies map[schema.GroupVersionKind]client.Object
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithClient sets the client (reads of the CR and its objects go through its cache).
func WithClient(c client.Client) Option { return func(r *Reconciler) { r.client = c } }

// WithKind sets the kind.
func WithKind(k Registered) Option { return func(r *Reconciler) { r.kind = k } }

// WithChart sets the chart the kind renders through.
func WithChart(c *charts.Chart) Option { return func(r *Reconciler) { r.chart = c } }

// WithReleases sets the factory of the CRs' release clients.
func WithReleases(f *Releases) Option {
	return func(r *Reconciler) { r.releases = f.factory }
}

// WithEventRecorder sets the event recorder.
func WithEventRecorder(rec record.EventRecorder) Option {
	return func(r *Reconciler) { r.recorder = rec }
}

// WithMaxReleaseHistory caps the release revisions Helm keeps.
func WithMaxReleaseHistory(n int) Option { return func(r *Reconciler) { r.maxHistory = n } }

// WithReconcilePeriod re-reconciles every CR this often; zero disables.
func WithReconcilePeriod(d time.Duration) Option { return func(r *Reconciler) { r.period = d } }

// WithPendingGrace sets how long a pending release is left alone before it
// is marked failed and upgraded; DefaultPendingGrace when 0.
func WithPendingGrace(d time.Duration) Option { return func(r *Reconciler) { r.grace = d } }

func (r *Reconciler) pendingGrace() time.Duration {
	if r.grace <= 0 {
		return DefaultPendingGrace
	}
	return r.grace
}

// WithMaxConcurrentReconciles sets how many CRs reconcile at once.
func WithMaxConcurrentReconciles(n int) Option { return func(r *Reconciler) { r.concurrency = n } }

// WithCapabilities tells the reconciler which optional APIs are served, and
// how often to look again (the watches of Meta.NamespaceWatches start when
// their API appears).
func WithCapabilities(f func() (Capabilities, error), period time.Duration) Option {
	return func(r *Reconciler) { r.caps, r.capsPeriod = f, period }
}

// WithNamespaces names the namespaces the manager watches (all when empty),
// for the caches of labelled namespace watches.
func WithNamespaces(ns []string) Option { return func(r *Reconciler) { r.namespaces = ns } }

// WithPartialCopies names the owned types whose cached copies are partial
// (the manager's cache drops a Deployment's pod template): drift repair reads
// those from the API server. It compares the others with their cached copies
// first, and reads only the ones that differ.
func WithPartialCopies(types ...client.Object) Option {
	return func(r *Reconciler) { r.partial = append(r.partial, types...) }
}

// WithHelmCapabilities hands Helm the cluster's capabilities instead of
// letting it discover every API group on each install and upgrade.
func WithHelmCapabilities(f func() (*common.Capabilities, error)) Option {
	return func(r *Reconciler) { r.helmCaps = f }
}

// NewReconciler builds a Reconciler; client, kind, chart, release clients
// and event recorder are required.
func NewReconciler(opts ...Option) (*Reconciler, error) {
	r := &Reconciler{maxHistory: 3, concurrency: 1, now: metav1.Now}
	for _, o := range opts {
		o(r)
	}
	switch {
	case r.client == nil:
		return nil, errors.New("reconciler: a client is required")
	case r.kind == nil:
		return nil, errors.New("reconciler: a kind is required")
	case r.chart == nil:
		return nil, errors.New("reconciler: a chart is required")
	case r.releases == nil:
		return nil, errors.New("reconciler: the release clients are required (WithReleases)")
	case r.recorder == nil:
		return nil, errors.New("reconciler: an event recorder is required")
	}
	r.meta = r.kind.Meta()
	vs, err := helm.CompileValuesSchema(r.chart.Chart)
	if err != nil {
		return nil, err
	}
	r.schema = vs
	r.fullCopies = map[schema.GroupVersionKind]client.Object{}
	for _, t := range r.meta.OwnedTypes {
		gvk, err := apiutil.GVKForObject(t, r.client.Scheme())
		if err != nil {
			return nil, fmt.Errorf("reconciler: owned type %T: %w", t, err)
		}
		if !slices.ContainsFunc(r.partial, func(p client.Object) bool { return reflect.TypeOf(p) == reflect.TypeOf(t) }) {
			r.fullCopies[gvk] = t
		}
	}
	return r, nil
}

// fromCache reads an object of a release from the cache of the owned
// types; nil when that type's copies are partial or the cache has none of
// that name.
func (r *Reconciler) fromCache(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts ...client.GetOption) client.Object {
	t, ok := r.fullCopies[gvk]
	if !ok {
		return nil
	}
	obj := t.DeepCopyObject().(client.Object)
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj, opts...); err != nil {
		return nil
	}
	return obj
}

// checkedCopies are the cached copies drift repair compared, with the
// version the cache held of each (complete stays true while every one came
// from the cache), for the drift cache.
type checkedCopies struct {
	objects  []checkedObject
	complete bool
}

// checkedCopies reads an object of a release from the cache for drift
// repair (nil: repair reads it from the API server) and notes it in seen.
func (r *Reconciler) checkedCopies(ctx context.Context, seen *checkedCopies) func(*helm.Object) runtime.Object {
	seen.complete = true
	return func(o *helm.Object) runtime.Object {
		gvk := o.Mapping.GroupVersionKind
		obj := r.fromCache(ctx, gvk, o.GetNamespace(), o.GetName())
		if obj == nil {
			seen.complete = false
			return nil
		}
		seen.objects = append(seen.objects, checkedObject{gvk: gvk, namespace: o.GetNamespace(), name: o.GetName(), resourceVersion: obj.GetResourceVersion()})
		return obj
	}
}

// cachedVersion is the resourceVersion of an object in the cache ("" when
// the cache does not hold it), read without a copy of the object.
func (r *Reconciler) cachedVersion(ctx context.Context) func(checkedObject) string {
	return func(o checkedObject) string {
		if obj := r.fromCache(ctx, o.gvk, o.namespace, o.name, client.UnsafeDisableDeepCopy); obj != nil {
			return obj.GetResourceVersion()
		}
		return ""
	}
}

// SetupWithManager registers the reconciler: the CR, and the objects its chart
// renders (through the label-limited cache), owned by controller reference.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(r.meta.GVK.Kind)).
		For(r.meta.NewObject()).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.concurrency})
	for _, t := range r.meta.OwnedTypes {
		b = b.Owns(t)
		// Objects Helm keeps (helm.sh/resource-policy: keep, such as the PVC)
		// carry owner annotations instead of an owner reference.
		b = b.Watches(t, &libhandler.EnqueueRequestForAnnotation[client.Object]{Type: r.meta.GVK.GroupKind()})
	}
	if refs, _, ok := r.kind.ConfigMapReader(); ok {
		// ConfigMaps as metadata only: memory does not grow with their data,
		// and no label is required on the user's ConfigMaps. A change maps to
		// the CRs that read the ConfigMap (an index of the CR cache) and to the
		// CR that owns it (the operator's own ConfigMaps).
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), r.meta.NewObject(), configMapRefIndex, refs); err != nil {
			return fmt.Errorf("index ConfigMap references: %w", err)
		}
		cm := &metav1.PartialObjectMetadata{}
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		b = b.WatchesMetadata(cm, handler.EnqueueRequestsFromMapFunc(r.configMapReaders))
		b = b.WatchesMetadata(cm, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.meta.NewObject(), handler.OnlyControllerOwner()))
	}
	if len(r.meta.NamespaceWatches) > 0 {
		b = b.Watches(r.meta.NewObject(), r.peersOnDelete())
	}
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	if len(r.meta.NamespaceWatches) == 0 {
		return nil
	}
	if r.caps == nil {
		return fmt.Errorf("reconciler: %s watches the objects its CRs act on and needs the capabilities (WithCapabilities)", r.meta.GVK.Kind)
	}
	optional := map[schema.GroupVersionKind]bool{}
	for _, gvk := range r.meta.OptionalAPIs {
		optional[gvk] = true
	}
	return mgr.Add(&namespaceWatches{ctrl: c, mgr: mgr, r: r, watches: r.meta.NamespaceWatches, optional: optional, namespaces: r.namespaces, caps: r.caps, period: r.capsPeriod, watching: map[int]bool{}})
}

// configMapRefIndex indexes CRs by the ConfigMaps they read ("namespace/name").
const configMapRefIndex = "ai-stack-operator.io/configmap-refs"

// configMapReaders maps a ConfigMap to the CRs that read it (all of them for
// a shared one, such as the operator's settings).
func (r *Reconciler) configMapReaders(ctx context.Context, cm client.Object) []reconcile.Request {
	key := cm.GetNamespace() + "/" + cm.GetName()
	list := r.meta.NewList()
	opts := []client.ListOption{client.MatchingFields{configMapRefIndex: key}}
	if _, shared, _ := r.kind.ConfigMapReader(); slices.Contains(shared, key) {
		opts = nil
	}
	if err := r.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list CRs that read a ConfigMap", "configmap", cm.GetNamespace()+"/"+cm.GetName())
		return nil
	}
	return requestsOf(list)
}

// requestsOf are the reconcile requests of a list's items.
func requestsOf(list client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return reqs
}

const (
	// DefaultPendingGrace is how long a pending release is left alone:
	// another replica (a leader that lost its lease but has not noticed yet)
	// may still be working on it. Helm actions here take seconds (no --wait).
	DefaultPendingGrace = 2 * time.Minute
	// conflictRecheck is how soon a CR blocked by a name conflict (or another
	// failure of recheckSoon) is reconciled again.
	conflictRecheck = 30 * time.Second
)

// AddFinalizer adds the operator's finalizer to obj with optimistic
// concurrency: the patch carries obj's resourceVersion, so that a stale copy
// fails with a conflict instead of dropping another controller's finalizer.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	return patchFinalizers(ctx, c, obj, "add", controllerutil.AddFinalizer)
}

// RemoveFinalizer removes the operator's finalizer from obj, with the same
// optimistic concurrency as AddFinalizer.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	return patchFinalizers(ctx, c, obj, "remove", controllerutil.RemoveFinalizer)
}

func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, verb string, change func(client.Object, string) bool) error {
	orig := obj.DeepCopyObject().(client.Object)
	change(obj, Finalizer)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("%s finalizer: %w", verb, err)
	}
	return nil
}
