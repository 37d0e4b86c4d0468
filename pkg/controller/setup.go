package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"helm.sh/helm/v3/pkg/chartutil"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

// Scheme returns a scheme with the built-in types and the operator's APIs.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := llamav1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// errNoOperatorNamespace: without it there is nowhere to keep release records.
var errNoOperatorNamespace = errors.New("the operator's namespace is required (--operator-namespace or $POD_NAMESPACE): Helm's release records are ConfigMaps there")

// LeaderElectionID names the leader election Lease. It is the same for every
// kind the operator serves: one leader reconciles them all.
const LeaderElectionID = "ai-stack-operator.io"

// KindDeps are what the kind adapters need from the running operator; the
// zero value serves offline rendering and cache setup.
type KindDeps struct {
	// APIReader reads uncached objects (the settings ConfigMap, Routes).
	APIReader client.Reader
	// Capabilities tells which optional APIs the cluster serves.
	Capabilities func() (values.Capabilities, error)
	// OperatorNamespace and SettingsConfigMap locate the operator's settings.
	OperatorNamespace, SettingsConfigMap string

	helmCapabilities func() (*chartutil.Capabilities, error)
}

// Kinds returns the adapters of every kind the operator knows, by GVK.
func Kinds(deps KindDeps) map[schema.GroupVersionKind]Kind {
	kinds := map[schema.GroupVersionKind]Kind{}
	for _, k := range []Kind{
		&LlamaStack{
			OperatorVersion:   version.Version,
			OperatorNamespace: deps.OperatorNamespace,
			SettingsConfigMap: deps.SettingsConfigMap,
			APIReader:         deps.APIReader,
			Capabilities:      deps.Capabilities,
		},
	} {
		kinds[k.GroupVersionKind()] = k
	}
	return kinds
}

// KindFor returns the adapter of a watches.yaml entry's kind.
func KindFor(w watches.Watch, deps KindDeps) (Kind, error) {
	k, ok := Kinds(deps)[w.GroupVersionKind()]
	if !ok {
		return nil, fmt.Errorf("watches.yaml lists %s, which this operator does not serve", w.GroupVersionKind())
	}
	return k, nil
}

// CacheOptions limits the cache of every rendered kind to the objects that
// carry the operator's label (LabelManaged): memory does not grow with unrelated
// objects, and Secrets (Helm's release storage) are never cached at all.
func CacheOptions(ws []watches.Watch, namespaces []string) (cache.Options, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelManaged: "true"})
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{},
		// managedFields are most of an object's metadata and no use here.
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	for _, w := range ws {
		k, err := KindFor(w, KindDeps{})
		if err != nil {
			return opts, err
		}
		for _, t := range k.OwnedTypes() {
			opts.ByObject[t] = cache.ByObject{Label: sel}
		}
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts, nil
}

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	// Watches are the kinds to serve (watches.yaml).
	Watches []watches.Watch
	// Namespaces to watch; empty watches all.
	Namespaces []string
	// MetricsAddr and ProbeAddr are bind addresses; "0" disables.
	MetricsAddr, ProbeAddr string
	// InsecureMetrics serves metrics over plain HTTP to anyone; by default
	// they are served over HTTPS to clients the API server authenticates and
	// authorizes (get on the non-resource URL /metrics).
	InsecureMetrics bool
	// LeaderElection and its lease namespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// OperatorNamespace is where the operator runs: its settings ConfigMap
	// lives there and NetworkPolicies let it in.
	OperatorNamespace string
	// SettingsConfigMap names the settings ConfigMap; "" reads none.
	SettingsConfigMap string
	// CapabilityTTL is how long detected optional APIs are remembered; a minute when 0.
	CapabilityTTL time.Duration
	// ReleaseSweepPeriod is how often release records of deleted CRs are
	// looked for; 10 minutes when 0.
	ReleaseSweepPeriod time.Duration
	// SkipControllerNameValidation lets a test run a second manager in one
	// process (controller names are otherwise unique per process).
	SkipControllerNameValidation bool
}

// NewManager builds the operator's manager: the scheme, caches limited by
// label, one reconciler per watched kind, and health checks.
func NewManager(cfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	if o.OperatorNamespace == "" {
		return nil, errNoOperatorNamespace
	}
	cacheOpts, err := CacheOptions(o.Watches, o.Namespaces)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: Scheme(),
		Cache:  cacheOpts,
		// Reads of ConfigMaps and Secrets go to the API server: they are read
		// by name, on demand, and never cached with their data.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}}},
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		Controller:              config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	detector := newCapabilityDetector(dc, dc, o.CapabilityTTL)
	deps := KindDeps{
		APIReader:         mgr.GetAPIReader(),
		Capabilities:      detector.Capabilities,
		helmCapabilities:  detector.HelmCapabilities,
		OperatorNamespace: o.OperatorNamespace,
		SettingsConfigMap: o.SettingsConfigMap,
	}
	if err := SetupWithManager(mgr, o.Watches, deps); err != nil {
		return nil, err
	}
	sweeper := &releaseSweeper{client: mgr.GetClient(), namespace: o.OperatorNamespace, kinds: map[string]Kind{}, period: o.ReleaseSweepPeriod}
	if sweeper.period <= 0 {
		sweeper.period = defaultSweepPeriod
	}
	for _, w := range o.Watches {
		k, err := KindFor(w, deps)
		if err != nil {
			return nil, err
		}
		sweeper.kinds[k.GroupVersionKind().Kind] = k
	}
	if err := mgr.Add(sweeper); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// SetupWithManager wires one reconciler per watches.yaml entry.
func SetupWithManager(mgr ctrl.Manager, ws []watches.Watch, deps KindDeps) error {
	// Helm names the field manager of what it applies after the binary unless
	// told otherwise; a rename of the binary must not change it.
	helmkube.ManagedFieldsManager = ManagedBy
	if deps.OperatorNamespace == "" {
		return errNoOperatorNamespace
	}
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	releases := cs.CoreV1().ConfigMaps(deps.OperatorNamespace)
	acg, err := helmclient.NewActionConfigGetter(mgr.GetConfig(), mgr.GetRESTMapper(),
		// Release records live in the operator's namespace, as ConfigMaps: the
		// operator needs no Secret permission, and a tenant cannot edit the
		// records its CR is applied from.
		helmclient.StorageDriverMapper(func(context.Context, client.Object, *rest.Config) (driver.Driver, error) {
			return driver.NewConfigMaps(releases), nil
		}))
	if err != nil {
		return fmt.Errorf("helm action config: %w", err)
	}
	// Failure rollbacks are off: a failed upgrade stays failed, reported in
	// status, and is retried with backoff instead of looping through rollbacks.
	actions, err := helmclient.NewActionClientGetter(acg, helmclient.WithFailureRollbacks(false))
	if err != nil {
		return fmt.Errorf("helm action client: %w", err)
	}
	for _, w := range ws {
		k, err := KindFor(w, deps)
		if err != nil {
			return err
		}
		c, err := charts.Load(w.Chart)
		if err != nil {
			return err
		}
		r, err := NewReconciler(
			WithClient(mgr.GetClient()),
			WithKind(k),
			WithChart(c),
			WithActionClientGetter(actions),
			WithEventRecorder(mgr.GetEventRecorderFor(ManagedBy)),
			WithMaxReleaseHistory(w.MaxReleaseHistory),
			WithReconcilePeriod(w.Period()),
			WithMaxConcurrentReconciles(w.MaxConcurrentReconciles),
			WithHelmCapabilities(deps.helmCapabilities),
		)
		if err != nil {
			return err
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %s controller: %w", w.Kind, err)
		}
	}
	return nil
}

// metricsOptions serves metrics over HTTPS (a self-signed certificate unless
// one is mounted) to authenticated and authorized clients only: a
// TokenReview and a SubjectAccessReview per scrape, as kubebuilder scaffolds.
func metricsOptions(o ManagerOptions) metricsserver.Options {
	if o.InsecureMetrics {
		return metricsserver.Options{BindAddress: o.MetricsAddr}
	}
	return metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization}
}
