package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	libhandler "github.com/operator-framework/operator-lib/handler"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
)

const (
	// ManagedBy names the operator in events, descriptions and field managers.
	ManagedBy = helm.ManagedBy
	// LabelManaged ("true") marks every object the operator renders and every
	// release Secret; the operator's caches select on it. (Helm itself sets
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
	actions     helmclient.ActionClientGetter
	recorder    record.EventRecorder
	maxHistory  int
	period      time.Duration
	grace       time.Duration
	concurrency int
	now         func() metav1.Time
	helmCaps    func() (*chartutil.Capabilities, error)
	caps        func() (Capabilities, error)
	capsPeriod  time.Duration
	namespaces  []string

	// refusals remembers, per CR, the values the API server refused (422), so
	// that the same values are not sent again until the spec or an input changes.
	refusals sync.Map // the CR's UID -> refusal
	// written remembers, per CR, the status last written and the
	// resourceVersion the API server gave the CR with it.
	written sync.Map // the CR's UID -> writtenStatus
	// reachable is when Helm's reachability check last passed.
	reachable atomic.Int64
	// partial are the owned types the cache holds partly; fullCopies the
	// others, by kind.
	partial    []client.Object
	fullCopies map[schema.GroupVersionKind]client.Object
}

// writtenStatus is a status the reconciler wrote.
type writtenStatus struct {
	rv     uint64
	status [sha256.Size]byte
}

// statusOf is the digest of the object's status as JSON (of null when it
// has none): 32 bytes per CR to remember rather than the whole status.
func statusOf(obj client.Object) [sha256.Size]byte {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return [sha256.Size]byte{}
	}
	b, err := json.Marshal(u["status"])
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// alreadyWritten says whether the status computed is the one the reconciler
// last wrote, and the CR it read is older than that write: a reconcile that
// ran before the cache saw its own status write (the finalizer's and the
// objects' events trigger several) writes nothing, and records no
// transitions a second time.
func (r *Reconciler) alreadyWritten(read, computed client.Object) bool {
	v, ok := r.written.Load(read.GetUID())
	if !ok {
		return false
	}
	w := v.(writtenStatus)
	rv, err := strconv.ParseUint(read.GetResourceVersion(), 10, 64)
	return err == nil && rv < w.rv && statusOf(computed) == w.status
}

// rememberWritten records the status just written.
func (r *Reconciler) rememberWritten(obj client.Object) {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return // not an etcd revision: no shortcut
	}
	r.written.Store(obj.GetUID(), writtenStatus{rv: rv, status: statusOf(obj)})
}

// refusal is a spec the API server refused, by the digest of its values.
type refusal struct {
	digest  string
	failure status.Failure
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithClient sets the client (reads of the CR and its objects go through its cache).
func WithClient(c client.Client) Option { return func(r *Reconciler) { r.client = c } }

// WithKind sets the kind.
func WithKind(k Registered) Option { return func(r *Reconciler) { r.kind = k } }

// WithChart sets the chart the kind renders through.
func WithChart(c *charts.Chart) Option { return func(r *Reconciler) { r.chart = c } }

// WithActionClientGetter sets the Helm action client getter.
func WithActionClientGetter(g helmclient.ActionClientGetter) Option {
	return func(r *Reconciler) { r.actions = g }
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
func WithHelmCapabilities(f func() (*chartutil.Capabilities, error)) Option {
	return func(r *Reconciler) { r.helmCaps = f }
}

// NewReconciler builds a Reconciler; client, kind, chart, action client getter
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
	case r.actions == nil:
		return nil, errors.New("reconciler: an action client getter is required")
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

// cachedCopy reads an object of a release from the cache of the owned types,
// for drift repair; nil when that type's copies are partial or the cache has
// none of that name.
func (r *Reconciler) cachedCopy(ctx context.Context) func(*resource.Info) runtime.Object {
	return func(info *resource.Info) runtime.Object {
		t, ok := r.fullCopies[info.Mapping.GroupVersionKind]
		if !ok {
			return nil
		}
		obj := t.DeepCopyObject().(client.Object)
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: info.Namespace, Name: info.Name}, obj); err != nil {
			return nil
		}
		return obj
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

// Reconcile brings one CR's release and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.meta.NewObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Typed objects read from a cache carry no TypeMeta; owner references need it.
	obj.GetObjectKind().SetGroupVersionKind(r.meta.GVK)
	owner := helm.OwnerOf(obj, r.meta.GVK.Kind, r.meta.ReleasePrefix)
	relName := owner.Release

	ac, err := r.actions.ActionClientFor(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("helm action client: %w", err)
	}
	if kc, ok := ac.Config().KubeClient.(*helmkube.Client); ok {
		ac.Config().KubeClient = helm.NewKubeClient(kc, &r.reachable, r.policy(obj), r.ownership(obj, relName))
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		err := r.uninstall(ctx, obj, ac, relName)
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		if err != nil {
			// The finalizer holds: the CR says why (phase Terminating).
			orig := obj.DeepCopyObject().(client.Object)
			obs := Observation{Now: r.now(), Applied: true, Deleting: true, Failure: &status.Failure{Reason: "UninstallFailed", Message: err.Error()}}
			if serr := r.kind.Status(ctx, obj, nil, obs); serr == nil && !equality.Semantic.DeepEqual(orig, obj) {
				_ = r.client.Status().Patch(ctx, obj, client.MergeFrom(orig))
			}
		}
		return ctrl.Result{}, err
	}
	if err := AddFinalizer(ctx, r.client, obj); apierrors.IsConflict(err) {
		// The cache was behind the API server: try again once it caught up.
		return ctrl.Result{Requeue: true}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}

	orig := obj.DeepCopyObject().(client.Object)
	obs := Observation{Now: r.now()}
	var applyErr error
	// current is the release apply found or made, when it is deployed.
	var current *release.Release
	kind := r.meta.GVK.Kind
	start := time.Now()
	inputs, err := r.kind.Gather(ctx, obj)
	var vals map[string]any
	if err == nil {
		vals, err = r.kind.Values(obj, inputs)
	}
	timePhase(kind, PhaseGather, start)
	var failure *status.Failure
	switch {
	case errors.As(err, &failure):
		// The user (or the administrator) must change something: say what, and wait.
		// The event comes with the Reconciled condition's transition.
		obs.Failure = &status.Failure{Reason: failure.Reason, Message: err.Error()}
	case err != nil:
		return ctrl.Result{}, err
	default:
		// What the chart mounts (the CA bundle) is written first; what the
		// kind writes outside Helm for the CR's objects (bindings, wiring)
		// waits until they passed the gate.
		start = time.Now()
		f, err := outsideHelm(r.kind.Prepare(ctx, obj, inputs))
		timePhase(kind, PhasePrepare, start)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case f != nil:
			obs.Failure = f
		default:
			start = time.Now()
			current, obs.Failure, applyErr = r.apply(ctx, ac, obj, relName, vals)
			timePhase(kind, PhaseApply, start)
			if current != nil && obs.Failure == nil && applyErr == nil {
				start = time.Now()
				f, err := outsideHelm(r.kind.Finish(ctx, obj, inputs))
				timePhase(kind, PhasePrepare, start)
				if err != nil {
					return ctrl.Result{}, err
				}
				obs.Failure = f
			}
		}
	}

	// The status reads the deployed release's objects: apply knows it when
	// it found the release in sync or installed or upgraded it; otherwise
	// (a failure, or nothing applied) the records are asked.
	deployed, err := current, error(nil)
	if deployed == nil {
		deployed, err = ac.Config().Releases.Deployed(relName)
	}
	switch {
	case err == nil:
		obs.Applied = true
		obs.Objects = manifestObjects(deployed.Manifest)
	case !errors.Is(err, driver.ErrNoDeployedReleases) && !errors.Is(err, driver.ErrReleaseNotFound):
		return ctrl.Result{}, errors.Join(applyErr, fmt.Errorf("read release %s: %w", relName, err))
	}

	start = time.Now()
	defer func() { timePhase(kind, PhaseStatus, start) }()
	if err := r.kind.Status(ctx, obj, inputs, obs); err != nil {
		return ctrl.Result{}, errors.Join(applyErr, err)
	}
	if !equality.Semantic.DeepEqual(orig, obj) && !r.alreadyWritten(orig, obj) {
		if err := r.client.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, errors.Join(applyErr, fmt.Errorf("update status: %w", err))
		}
		r.rememberWritten(obj)
		r.recordTransitions(obj, r.kind.Conditions(orig), r.kind.Conditions(obj))
	}
	// An apply error is returned so that the work is retried with backoff;
	// an invalid spec waits for the user to change it; a name conflict is
	// looked at again soon, since the user may rename or delete the object
	// in the way (which no watch of the operator sees), and so is a refused
	// write (the administrator fixes the installation, which no watch sees).
	after := r.period
	if obs.Failure != nil && recheckSoon[obs.Failure.Reason] && (after == 0 || after > conflictRecheck) {
		after = conflictRecheck
	}
	// The kind may want to look again sooner at what no watch of the
	// operator sees (a Route's admission, a Secret's appearance).
	if d := r.kind.Recheck(obj); d > 0 && (after == 0 || d < after) {
		after = d
	}
	return ctrl.Result{RequeueAfter: after}, applyErr
}

// outsideHelm sorts out an error of a kind's writes outside Helm: a failure
// the user or the administrator fixes, or an error to retry.
func outsideHelm(err error) (*status.Failure, error) {
	var failure *status.Failure
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &failure):
		return &status.Failure{Reason: failure.Reason, Field: failure.Field, Message: err.Error()}, nil
	case apierrors.IsForbidden(err):
		// Retrying with backoff would not say why nothing happens.
		return &status.Failure{Reason: status.ReasonOperatorForbidden, Message: err.Error() + ": the operator's installation does not allow what this resource needs (docs/security.md lists its permissions)"}, nil
	}
	return nil, err
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

// policy is what a manifest of this CR may hold.
func (r *Reconciler) policy(obj client.Object) guard.Policy {
	return guard.Policy{Namespace: obj.GetNamespace(), Kinds: r.chart.Kinds}
}

// ownership describes the objects the operator renders for this CR.
func (r *Reconciler) ownership(obj client.Object, relName string) guard.Ownership {
	own := guard.Ownership{Label: LabelManaged, Release: relName, Owner: r.meta.GVK.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if legacy := naming.LegacyReleaseName(r.meta.ReleasePrefix, obj.GetNamespace(), obj.GetName()); legacy != relName {
		own.Legacy = legacy
	}
	return own
}

// gated is the operator's gate, which replaces the post-renderer
// helm-operator-plugins sets (owner references; the gate sets them itself).
func (r *Reconciler) gated(ac helmclient.ActionInterface, obj client.Object, relName string, vals map[string]any) postrender.PostRenderer {
	return helm.NewGate(ac.Config(), r.policy(obj), r.ownership(obj, relName), obj, r.meta.GVK, helm.RecordCheck(obj, relName, r.chart.Chart, vals))
}

// failed turns a failed Helm action into a status failure: problems the user
// fixes carry their own reason and are not retried with backoff; anything
// else is returned to be retried.
func (r *Reconciler) failed(obj client.Object, reason, relName string, err error) (*status.Failure, error) {
	if f := helm.AsUserError(err); f != nil {
		// The event comes with the Reconciled condition's transition.
		return f, nil
	}
	r.recorder.Eventf(obj, corev1.EventTypeWarning, reason, "%s of release %s failed: %v", strings.ToLower(strings.TrimSuffix(reason, "Failed")), relName, err)
	return &status.Failure{Reason: reason, Message: err.Error()}, err
}

// checkValues validates values against the chart's values.schema.json before
// Helm does, so that a violation is an invalid spec, not a failed install.
func (r *Reconciler) checkValues(vals map[string]any) *status.Failure {
	validate := func() error { return chartutil.ValidateAgainstSchema(r.chart.Chart, vals) }
	if r.schema != nil {
		validate = func() error { return r.schema.Validate(vals) }
	}
	if err := validate(); err != nil {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: "the spec translates into chart values the chart refuses: " + strings.TrimSpace(err.Error())}
	}
	return nil
}

// valuesDigest identifies values and chart, for refusals.
func (r *Reconciler) valuesDigest(vals map[string]any) string {
	b, _ := json.Marshal(vals) // maps marshal with sorted keys
	sum := sha256.Sum256(append(b, r.chart.Digest...))
	return hex.EncodeToString(sum[:])
}

// refused returns the remembered refusal of these values, if any.
func (r *Reconciler) refused(obj client.Object, digest string) *status.Failure {
	if v, ok := r.refusals.Load(obj.GetUID()); ok && v.(refusal).digest == digest {
		f := v.(refusal).failure
		return &f
	}
	return nil
}

// remember records the outcome of sending values: a refusal by the API
// server (InvalidSpec) is kept; anything else forgets an earlier one.
func (r *Reconciler) remember(obj client.Object, digest string, f *status.Failure) {
	if f != nil && f.Reason == status.ReasonInvalidSpec {
		r.refusals.Store(obj.GetUID(), refusal{digest: digest, failure: *f})
		return
	}
	r.refusals.Delete(obj.GetUID())
}

// apply installs, upgrades or repairs the release. It upgrades only when the
// values or the chart differ from the deployed release's, so that an
// unchanged CR costs reads only. Every install and upgrade goes through the
// gate (the chart's policy and the ownership of every name), and drift
// repair checks the stored manifest the same way before it writes.
// apply installs or upgrades the release, or repairs its objects when it is
// in sync, and returns the release when it is then deployed.
func (r *Reconciler) apply(ctx context.Context, ac helmclient.ActionInterface, obj client.Object, relName string, vals map[string]any) (*release.Release, *status.Failure, error) {
	// Whose release this is: the storage serves a CR its own records only,
	// and the sweep removes records whose CR is gone.
	owner := helm.OwnerOf(obj, r.meta.GVK.Kind, r.meta.ReleasePrefix)
	labels := owner.Labels()
	labels[LabelManaged], labels[LabelChartDigest] = "true", r.chart.Digest[:32]
	if r.helmCaps != nil {
		caps, err := r.helmCaps()
		if err != nil {
			return nil, nil, err
		}
		ac.Config().Capabilities = caps
	}
	last, err := ac.Get(relName)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, &status.Failure{Reason: "ReleaseUnreadable", Message: err.Error()}, fmt.Errorf("read release %s: %w", relName, err)
	}
	// Drift is repaired toward a release of this very CR only: a release of
	// an earlier CR of the same name (its objects name a dead owner, which the
	// garbage collector deletes) is upgraded, rendering every object again.
	if last != nil && last.Info.Status == release.StatusDeployed && reflect.DeepEqual(last.Config, vals) && last.Labels[LabelChartDigest] == labels[LabelChartDigest] && owner.Current(last.Labels) {
		repaired, err := helm.RepairDrift(ac.Config(), last.Manifest, r.policy(obj), r.ownership(obj, relName), r.cachedCopy(ctx))
		if len(repaired) > 0 {
			r.recorder.Eventf(obj, corev1.EventTypeNormal, "DriftRepaired", "restored %s to what release %s renders", strings.Join(repaired, ", "), relName)
		}
		f, err := r.failedUnlessNil(obj, "DriftRepairFailed", relName, err)
		return last, f, err
	}

	// Install or upgrade: values the chart or the API server refuses are an
	// invalid spec, and the same values are not sent again.
	if f := r.checkValues(vals); f != nil {
		return nil, f, nil
	}
	digest := r.valuesDigest(vals)
	if f := r.refused(obj, digest); f != nil {
		return nil, f, nil
	}
	var (
		rel *release.Release
		f   *status.Failure
	)
	if last == nil {
		rel, f, err = r.install(ac, obj, relName, vals, labels)
		if err == nil && f == nil && rel != nil {
			err = r.sweepUnrendered(ctx, obj, relName, rel.Manifest)
		}
	} else {
		rel, f, err = r.upgrade(ac, obj, relName, vals, labels, last)
	}
	r.remember(obj, digest, f)
	if rel != nil && rel.Info.Status != release.StatusDeployed {
		rel = nil
	}
	return rel, f, err
}

// sweepUnrendered deletes, after an install, the operator's objects of this
// CR that the installed manifest does not hold. An install finds no release
// records: the CR is new, or its records were deleted by hand, and then the
// objects an earlier spec rendered (an Ingress, a PDB) would stay forever,
// owned by a live CR that no longer renders them. The owned types' cache
// holds the operator's objects only; each is deleted when it is the
// operator's for this very CR (its controller is this CR, by UID), with its
// UID as a precondition. Objects the chart keeps have no controller and stay.
func (r *Reconciler) sweepUnrendered(ctx context.Context, obj client.Object, relName string, manifest string) error {
	rendered := map[string]bool{}
	for _, o := range manifestObjects(manifest) {
		rendered[o.Kind+"/"+o.Name] = true
	}
	own := r.ownership(obj, relName)
	var swept []string
	for _, t := range r.meta.OwnedTypes {
		gvk, err := apiutil.GVKForObject(t, r.client.Scheme())
		if err != nil {
			return err
		}
		// The typed list: the cache already watches these types (a list of
		// their metadata would start a second watch of each).
		lo, err := r.client.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		list := lo.(client.ObjectList)
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{LabelManaged: "true"}); err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		err = meta.EachListItem(list, func(o runtime.Object) error {
			item, ok := o.(client.Object)
			if !ok {
				return nil
			}
			c := metav1.GetControllerOfNoCopy(item)
			if c == nil || c.UID != obj.GetUID() || rendered[gvk.Kind+"/"+item.GetName()] {
				return nil
			}
			if own.Check(gvk.Kind, item.GetLabels(), item.GetAnnotations(), item.GetOwnerReferences()) != nil {
				return nil
			}
			uid := item.GetUID()
			if err := r.client.Delete(ctx, item, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete %s %s: %w", gvk.Kind, item.GetName(), err)
			}
			swept = append(swept, gvk.Kind+" "+item.GetName())
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(swept) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "ObjectsPruned", "deleted %s: the spec no longer renders them (release %s had no records)", strings.Join(swept, ", "), relName)
	}
	return nil
}

// failedUnlessNil is failed for an error and nothing for none.
func (r *Reconciler) failedUnlessNil(obj client.Object, reason, relName string, err error) (*status.Failure, error) {
	if err == nil {
		return nil, nil
	}
	return r.failed(obj, reason, relName, err)
}

func (r *Reconciler) install(ac helmclient.ActionInterface, obj client.Object, relName string, vals map[string]any, labels map[string]string) (*release.Release, *status.Failure, error) {
	rel, err := ac.Install(relName, obj.GetNamespace(), r.chart.Chart, vals, func(i *action.Install) error {
		i.Labels = labels
		// The API server validates what it is sent; Helm's client-side
		// validation would download the cluster's OpenAPI document each time.
		i.DisableOpenAPIValidation = true
		// checkValues validated the values with the schema compiled once.
		i.SkipSchemaValidation = r.schema != nil
		// Hooks skip the post-renderer, so the gate would not see them; the
		// charts have none, and none may run.
		i.DisableHooks = true
		i.PostRenderer = r.gated(ac, obj, relName, vals)
		return nil
	})
	if err != nil {
		f, err := r.failed(obj, "InstallFailed", relName, err)
		return nil, f, err
	}
	if f, err := r.recorded(ac, obj, relName); err != nil {
		return nil, f, err
	}
	upstream := false
	for _, o := range manifestObjects(rel.Manifest) {
		if reason := r.meta.CreatedEvents[o.Kind]; reason != "" {
			r.recorder.Eventf(obj, corev1.EventTypeNormal, reason, "created %s %s (installed release %s revision %d)", o.Kind, o.Name, rel.Name, rel.Version)
			upstream = true
		}
	}
	if !upstream {
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "Installed", "installed release %s revision %d", rel.Name, rel.Version)
	}
	return rel, nil, nil
}

func (r *Reconciler) upgrade(ac helmclient.ActionInterface, obj client.Object, relName string, vals map[string]any, labels map[string]string, last *release.Release) (*release.Release, *status.Failure, error) {
	if st := last.Info.Status; st.IsPending() || st == release.StatusUninstalling {
		if age := r.now().Sub(last.Info.LastDeployed.Time); age < r.pendingGrace() {
			return nil, &status.Failure{Reason: status.ReasonReleaseBusy, Message: fmt.Sprintf("release %s revision %d has been %s for %s; it is left alone for %s in case another operation is still running, then marked failed and upgraded", relName, last.Version, st, age.Round(time.Second), r.pendingGrace())}, nil
		}
		// A killed operator leaves the release locked; Helm refuses every
		// action until it is marked failed, after which it upgrades cleanly.
		last.Info.Status = release.StatusFailed
		last.Info.Description = fmt.Sprintf("left %s by an interrupted operation; marked failed by %s", st, ManagedBy)
		if err := ac.Config().Releases.Update(last); err != nil {
			return nil, &status.Failure{Reason: "ReleaseLocked", Message: err.Error()}, fmt.Errorf("repair release %s: %w", relName, err)
		}
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ReleaseRepaired", "release %s revision %d was left %s by an interrupted operation; marked failed and upgrading", relName, last.Version, st)
	}
	rel, err := ac.Upgrade(relName, obj.GetNamespace(), r.chart.Chart, vals, func(u *action.Upgrade) error {
		u.MaxHistory = r.maxHistory
		u.Labels = labels
		u.DisableOpenAPIValidation = true
		u.SkipSchemaValidation = r.schema != nil
		u.DisableHooks = true
		u.PostRenderer = r.gated(ac, obj, relName, vals)
		return nil
	})
	if kc, ok := ac.Config().KubeClient.(*helm.KubeClient); ok && len(kc.Left()) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ObjectsLeft", "left %s: the spec no longer renders them, and they were not created by the operator for this resource", strings.Join(kc.Left(), ", "))
	}
	if err != nil {
		f, err := r.failed(obj, "UpgradeFailed", relName, err)
		return nil, f, err
	}
	if f, err := r.recorded(ac, obj, relName); err != nil {
		return nil, f, err
	}
	r.recorder.Eventf(obj, corev1.EventTypeNormal, "Upgraded", "upgraded release %s to revision %d", rel.Name, rel.Version)
	return rel, nil, nil
}

// recorded checks that Helm stored the record of the install or upgrade
// it reported: Helm logs a failed write of it and succeeds. Objects applied
// without their record are a failure, retried with backoff (the next
// install adopts them).
func (r *Reconciler) recorded(ac helmclient.ActionInterface, obj client.Object, relName string) (*status.Failure, error) {
	d, ok := ac.Config().Releases.Driver.(*helm.HeldPending)
	if !ok {
		return nil, nil
	}
	err := d.WriteFailure()
	if err == nil {
		return nil, nil
	}
	r.recorder.Eventf(obj, corev1.EventTypeWarning, ReasonReleaseNotRecorded, "release %s: the objects were applied but their record was not stored: %v", relName, err)
	return &status.Failure{Reason: ReasonReleaseNotRecorded, Message: fmt.Sprintf("the objects of release %s were applied but its record was not stored (%v); retrying", relName, err)}, err
}

// ReasonReleaseNotRecorded: Helm applied the objects and failed to store the release record.
const ReasonReleaseNotRecorded = "ReleaseNotRecorded"

// uninstall removes what the release created and its records, then the
// finalizer. It is the operator's own, not Helm's: each object is deleted
// only if it is the operator's (an object of the same name that someone
// else created in the meantime is left, with an event), only inside the CR's
// namespace (whatever a stored manifest says), never when the chart keeps it
// (helm.sh/resource-policy: keep), and with its UID as a precondition, so
// that what is deleted is exactly what was checked.
func (r *Reconciler) uninstall(ctx context.Context, obj client.Object, ac helmclient.ActionInterface, relName string) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	cfg := ac.Config()
	history, err := cfg.Releases.History(relName)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("read release %s: %w", relName, err)
	}
	deleted, left, err := helm.DeleteReleaseObjects(cfg, history, r.policy(obj), r.ownership(obj, relName))
	if len(left) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ObjectsLeft", "left %s: not created by the operator for this resource", strings.Join(left, ", "))
	}
	if err != nil {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "UninstallFailed", "uninstall of release %s failed: %v", relName, err)
		return fmt.Errorf("uninstall release %s: %w", relName, err)
	}
	for _, rel := range history {
		if _, err := cfg.Releases.Delete(rel.Name, rel.Version); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return fmt.Errorf("delete release %s revision %d: %w", rel.Name, rel.Version, err)
		}
	}
	if len(history) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "Uninstalled", "uninstalled release %s (%d objects deleted)", relName, deleted)
	}
	r.refusals.Delete(obj.GetUID())
	r.written.Delete(obj.GetUID())
	if err := r.kind.Cleanup(ctx, obj); err != nil {
		return fmt.Errorf("clean up: %w", err)
	}
	return client.IgnoreNotFound(RemoveFinalizer(ctx, r.client, obj))
}

// recordTransitions emits one event per condition whose status changed.
func (r *Reconciler) recordTransitions(obj client.Object, before, after []metav1.Condition) {
	for _, t := range status.Transitions(before, after) {
		c := t.Condition
		prev := meta.FindStatusCondition(before, c.Type)
		failure := c.Type == status.TypeReconciled || slices.Contains(r.meta.WarningConditions, c.Type)
		eventType := ""
		switch {
		case failure && c.Status == metav1.ConditionFalse:
			// Something the user or the administrator must fix, from the start too.
			eventType = corev1.EventTypeWarning
		case failure && prev != nil:
			// Its recovery.
			eventType = corev1.EventTypeNormal
		case c.Type == status.TypeReady && prev != nil:
			// Ready changed: the server serves, or stopped serving, the spec.
			eventType = corev1.EventTypeNormal
		}
		// A condition that starts out as expected, and the changes Ready's
		// message already reports (DeploymentReady, ServiceReady, ...), are in
		// the status only: an event is a write, and nobody acts on those.
		if eventType != "" {
			r.recorder.Eventf(obj, eventType, c.Reason, "%s is %s: %s", c.Type, c.Status, c.Message)
		}
	}
}

// manifestObjects lists the objects of a release manifest, sorted. Every
// reconcile lists the deployed release's objects, whose manifest changes only
// with an upgrade: the lists of the last manifests are remembered by digest.
func manifestObjects(manifest string) []ObjectRef {
	key := sha256.Sum256([]byte(manifest))
	manifestMemo.Lock()
	objs, ok := manifestMemo.lists[key]
	manifestMemo.Unlock()
	if !ok {
		objs = parseManifestObjects(manifest)
		manifestMemo.Lock()
		if len(manifestMemo.lists) >= manifestMemoSize {
			clear(manifestMemo.lists)
		}
		manifestMemo.lists[key] = objs
		manifestMemo.Unlock()
	}
	return slices.Clone(objs)
}

// manifestMemoSize bounds the lists manifestObjects remembers (a few hundred
// bytes each): one per CR up to a thousand or two, and then it starts over.
const manifestMemoSize = 2048

var manifestMemo = struct {
	sync.Mutex
	lists map[[sha256.Size]byte][]ObjectRef
}{lists: map[[sha256.Size]byte][]ObjectRef{}}

func parseManifestObjects(manifest string) []ObjectRef {
	var out []ObjectRef
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil || head.Kind == "" {
			continue
		}
		out = append(out, ObjectRef{Kind: head.Kind, Name: head.Metadata.Name})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// recheckSoon are the failures that a change no watch of the operator sees
// resolves: they are reconciled again after conflictRecheck.
var recheckSoon = map[string]bool{status.ReasonNameConflict: true, status.ReasonReleaseBusy: true, status.ReasonOperatorForbidden: true}
