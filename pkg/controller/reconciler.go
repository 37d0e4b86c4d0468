package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	libhandler "github.com/operator-framework/operator-lib/handler"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

const (
	// ManagedBy names the operator in events, descriptions and field managers.
	ManagedBy = "ai-stack-operator"
	// LabelManaged ("true") marks every object the operator renders and every
	// release Secret; the operator's caches select on it. (Helm itself sets
	// app.kubernetes.io/managed-by=Helm on every object it applies, so that
	// label cannot be ours.)
	LabelManaged = "ai-stack-operator.io/managed"
	// Finalizer makes deletion of a CR wait for its release's uninstall.
	Finalizer = "ai-stack-operator.io/uninstall"
	// LabelChartDigest on a release records the digest of the chart it was rendered from.
	LabelChartDigest = "ai-stack-operator.io/chart-digest"
)

// Reconciler reconciles one kind through its embedded chart: install,
// upgrade only when the values or the chart changed, drift repair otherwise,
// uninstall on deletion, and a status of the kind's own.
type Reconciler struct {
	client      client.Client
	kind        Kind
	chart       *charts.Chart
	actions     helmclient.ActionClientGetter
	recorder    record.EventRecorder
	maxHistory  int
	period      time.Duration
	concurrency int
	now         func() metav1.Time
	helmCaps    func() (*chartutil.Capabilities, error)
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithClient sets the client (reads of the CR and its objects go through its cache).
func WithClient(c client.Client) Option { return func(r *Reconciler) { r.client = c } }

// WithKind sets the kind adapter.
func WithKind(k Kind) Option { return func(r *Reconciler) { r.kind = k } }

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

// WithMaxConcurrentReconciles sets how many CRs reconcile at once.
func WithMaxConcurrentReconciles(n int) Option { return func(r *Reconciler) { r.concurrency = n } }

// WithHelmCapabilities hands Helm the cluster's capabilities instead of
// letting it discover every API group on each install and upgrade.
func WithHelmCapabilities(f func() (*chartutil.Capabilities, error)) Option {
	return func(r *Reconciler) { r.helmCaps = f }
}

// WithClock sets the clock that stamps condition transitions (tests).
func WithClock(now func() metav1.Time) Option { return func(r *Reconciler) { r.now = now } }

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
	return r, nil
}

// SetupWithManager registers the reconciler: the CR, and the objects its chart
// renders (through the label-limited cache), owned by controller reference.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(r.kind.GroupVersionKind().Kind)).
		For(r.kind.NewObject()).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.concurrency})
	for _, t := range r.kind.OwnedTypes() {
		b = b.Owns(t)
		// Objects Helm keeps (helm.sh/resource-policy: keep, such as the PVC)
		// carry owner annotations instead of an owner reference.
		b = b.Watches(t, &libhandler.EnqueueRequestForAnnotation[client.Object]{Type: r.kind.GroupVersionKind().GroupKind()})
	}
	if ref, ok := r.kind.(ConfigMapReferrer); ok {
		// ConfigMaps as metadata only: memory does not grow with their data,
		// and no label is required on the user's ConfigMaps. A change maps to
		// the CRs that read the ConfigMap (an index of the CR cache) and to the
		// CR that owns it (the operator's own ConfigMaps).
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), r.kind.NewObject(), configMapRefIndex, func(o client.Object) []string {
			return ref.ConfigMapRefs(o)
		}); err != nil {
			return fmt.Errorf("index ConfigMap references: %w", err)
		}
		cm := &metav1.PartialObjectMetadata{}
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		b = b.WatchesMetadata(cm, handler.EnqueueRequestsFromMapFunc(r.configMapReaders))
		b = b.WatchesMetadata(cm, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.kind.NewObject(), handler.OnlyControllerOwner()))
	}
	return b.Complete(r)
}

// configMapRefIndex indexes CRs by the ConfigMaps they read ("namespace/name").
const configMapRefIndex = "ai-stack-operator.io/configmap-refs"

// configMapReaders maps a ConfigMap to the CRs that read it (all of them for
// a shared one, such as the operator's settings).
func (r *Reconciler) configMapReaders(ctx context.Context, cm client.Object) []reconcile.Request {
	key := cm.GetNamespace() + "/" + cm.GetName()
	list := r.kind.NewList()
	opts := []client.ListOption{client.MatchingFields{configMapRefIndex: key}}
	if ref, ok := r.kind.(ConfigMapReferrer); ok && slices.Contains(ref.SharedConfigMaps(), key) {
		opts = nil
	}
	if err := r.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list CRs that read a ConfigMap", "configmap", cm.GetNamespace()+"/"+cm.GetName())
		return nil
	}
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
	obj := r.kind.NewObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Typed objects read from a cache carry no TypeMeta; owner references need it.
	obj.GetObjectKind().SetGroupVersionKind(r.kind.GroupVersionKind())
	relName := naming.ReleaseName(r.kind.ReleasePrefix(), obj.GetName())

	ac, err := r.actions.ActionClientFor(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("helm action client: %w", err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.uninstall(ctx, obj, ac, relName)
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		orig := obj.DeepCopyObject().(client.Object)
		controllerutil.AddFinalizer(obj, Finalizer)
		if err := r.client.Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}

	orig := obj.DeepCopyObject().(client.Object)
	obs := Observation{Now: r.now()}
	var applyErr error
	inputs, err := r.kind.Gather(ctx, r.client, obj)
	var vals map[string]any
	if err == nil {
		vals, err = r.kind.Values(obj, inputs)
	}
	var reasoned interface{ Reason() string }
	switch {
	case errors.As(err, &reasoned):
		// The user (or the administrator) must change something: say what, and wait.
		// The event comes with the Reconciled condition's transition.
		obs.Failure = &status.Failure{Reason: reasoned.Reason(), Message: err.Error()}
	case err != nil:
		return ctrl.Result{}, err
	default:
		if p, ok := r.kind.(Preparer); ok {
			if err := p.Prepare(ctx, r.client, r.recorder, obj, inputs); err != nil {
				return ctrl.Result{}, err
			}
		}
		obs.Failure, applyErr = r.apply(ac, obj, relName, vals)
	}

	deployed, err := ac.Config().Releases.Deployed(relName)
	switch {
	case err == nil:
		obs.Applied = true
		obs.Objects = manifestObjects(deployed.Manifest)
	case !errors.Is(err, driver.ErrNoDeployedReleases) && !errors.Is(err, driver.ErrReleaseNotFound):
		return ctrl.Result{}, errors.Join(applyErr, fmt.Errorf("read release %s: %w", relName, err))
	}

	if err := r.kind.SetStatus(ctx, r.client, obj, inputs, obs); err != nil {
		return ctrl.Result{}, errors.Join(applyErr, err)
	}
	if !equality.Semantic.DeepEqual(orig, obj) {
		if err := r.client.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, errors.Join(applyErr, fmt.Errorf("update status: %w", err))
		}
		r.recordTransitions(obj, r.kind.Conditions(orig), r.kind.Conditions(obj))
	}
	// An apply error is returned so that the work is retried with backoff;
	// an invalid spec waits for the user to change it.
	return ctrl.Result{RequeueAfter: r.period}, applyErr
}

// apply installs, upgrades or repairs the release. It upgrades only when the
// values or the chart differ from the deployed release's, so that an
// unchanged CR costs reads only.
func (r *Reconciler) apply(ac helmclient.ActionInterface, obj client.Object, relName string, vals map[string]any) (*status.Failure, error) {
	labels := map[string]string{LabelManaged: "true", LabelChartDigest: r.chart.Digest[:32]}
	if r.helmCaps != nil {
		caps, err := r.helmCaps()
		if err != nil {
			return nil, err
		}
		ac.Config().Capabilities = caps
	}
	last, err := ac.Get(relName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		rel, err := ac.Install(relName, obj.GetNamespace(), r.chart.Chart, vals, func(i *action.Install) error {
			i.Labels = labels
			// The API server validates what it is sent; Helm's client-side
			// validation would download the cluster's OpenAPI document each time.
			i.DisableOpenAPIValidation = true
			return nil
		})
		if err != nil {
			r.recorder.Eventf(obj, corev1.EventTypeWarning, "InstallFailed", "install of release %s failed: %v", relName, err)
			return &status.Failure{Reason: "InstallFailed", Message: err.Error()}, err
		}
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "Installed", "installed release %s revision %d", rel.Name, rel.Version)
		return nil, nil
	}
	if err != nil {
		return &status.Failure{Reason: "ReleaseUnreadable", Message: err.Error()}, fmt.Errorf("read release %s: %w", relName, err)
	}

	if st := last.Info.Status; st.IsPending() || st == release.StatusUninstalling {
		// A killed operator leaves the release locked; Helm refuses every
		// action until it is marked failed, after which it upgrades cleanly.
		last.Info.Status = release.StatusFailed
		last.Info.Description = fmt.Sprintf("left %s by an interrupted operation; marked failed by %s", st, ManagedBy)
		if err := ac.Config().Releases.Update(last); err != nil {
			return &status.Failure{Reason: "ReleaseLocked", Message: err.Error()}, fmt.Errorf("repair release %s: %w", relName, err)
		}
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ReleaseRepaired", "release %s revision %d was left %s by an interrupted operation; marked failed and upgrading", relName, last.Version, st)
	}

	if last.Info.Status == release.StatusDeployed && reflect.DeepEqual(last.Config, vals) && last.Labels[LabelChartDigest] == labels[LabelChartDigest] {
		repaired, err := repairDrift(ac.Config(), last.Manifest)
		if len(repaired) > 0 {
			r.recorder.Eventf(obj, corev1.EventTypeNormal, "DriftRepaired", "restored %s to what release %s renders", strings.Join(repaired, ", "), relName)
		}
		if err != nil {
			r.recorder.Eventf(obj, corev1.EventTypeWarning, "DriftRepairFailed", "could not restore the objects of release %s: %v", relName, err)
			return &status.Failure{Reason: "DriftRepairFailed", Message: err.Error()}, err
		}
		return nil, nil
	}

	rel, err := ac.Upgrade(relName, obj.GetNamespace(), r.chart.Chart, vals, func(u *action.Upgrade) error {
		u.MaxHistory = r.maxHistory
		u.Labels = labels
		u.DisableOpenAPIValidation = true
		return nil
	})
	if err != nil {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "UpgradeFailed", "upgrade of release %s failed: %v", relName, err)
		return &status.Failure{Reason: "UpgradeFailed", Message: err.Error()}, err
	}
	r.recorder.Eventf(obj, corev1.EventTypeNormal, "Upgraded", "upgraded release %s to revision %d", rel.Name, rel.Version)
	return nil, nil
}

func (r *Reconciler) uninstall(ctx context.Context, obj client.Object, ac helmclient.ActionInterface, relName string) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	resp, err := ac.Uninstall(relName)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
	case err != nil:
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "UninstallFailed", "uninstall of release %s failed: %v", relName, err)
		return fmt.Errorf("uninstall release %s: %w", relName, err)
	default:
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "Uninstalled", "uninstalled release %s", resp.Release.Name)
	}
	if p, ok := r.kind.(Preparer); ok {
		if err := p.Cleanup(ctx, r.client, obj); err != nil {
			return fmt.Errorf("clean up: %w", err)
		}
	}
	orig := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.client.Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("remove finalizer: %w", err))
	}
	return nil
}

// recordTransitions emits one event per condition whose status changed.
func (r *Reconciler) recordTransitions(obj client.Object, before, after []metav1.Condition) {
	for _, t := range status.Transitions(before, after) {
		eventType := corev1.EventTypeNormal
		if t.Condition.Status == metav1.ConditionFalse && (t.Condition.Type == status.TypeReconciled || t.Condition.Type == status.TypeTrustReady) {
			eventType = corev1.EventTypeWarning
		}
		r.recorder.Eventf(obj, eventType, t.Condition.Reason, "%s is %s: %s", t.Condition.Type, t.Condition.Status, t.Condition.Message)
	}
}

// manifestObjects lists the objects of a release manifest, sorted.
func manifestObjects(manifest string) []ObjectRef {
	var out []ObjectRef
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil || head.Kind == "" {
			continue
		}
		out = append(out, ObjectRef{APIVersion: head.APIVersion, Kind: head.Kind, Name: head.Metadata.Name})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}
