package operator

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/metricsauth"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

// errNoOperatorNamespace: without it there is nowhere to keep release records.
var errNoOperatorNamespace = errors.New("the operator's namespace is required (--operator-namespace or $POD_NAMESPACE): Helm's release records are ConfigMaps there")

// LeaderElectionID names the leader election Lease. It is the same for every
// kind the operator serves: one leader reconciles them all.
const LeaderElectionID = "ai-stack-operator.io"

// The leader election timing. A leader keeps trying to renew its lease for
// RenewDeadline and ends its process when it cannot (controller-runtime's
// design: two leaders must never reconcile at once). 40 s rides out an API
// server outage of 30 s; the lease then has to be 60 s, so a replica that
// dies without stepping down is replaced within 60 s (+ one retry period).
// A replica that stops cleanly (SIGTERM) releases the lease at once.
const (
	DefaultLeaseDuration = 60 * time.Second
	DefaultRenewDeadline = 40 * time.Second
	DefaultRetryPeriod   = 5 * time.Second
)

// CacheOptions limits the cache of every rendered kind to the objects that
// carry the operator's label (LabelManaged): memory does not grow with unrelated
// objects, and Secrets (Helm's release storage) are never cached at all.
func CacheOptions(ws []watches.Watch, namespaces []string) (cache.Options, error) {
	sel := labels.SelectorFromSet(labels.Set{release.LabelManaged: "true"})
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{},
		// managedFields are most of an object's metadata and no use here.
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	ms, err := metas(ws)
	if err != nil {
		return opts, err
	}
	for _, m := range ms {
		for _, t := range m.OwnedTypes {
			by := cache.ByObject{Label: sel}
			if _, ok := t.(*appsv1.Deployment); ok {
				by.Transform = slimDeployment
			}
			opts.ByObject[t] = by
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

// slimDeployment keeps of a cached Deployment what the kinds' status reads
// (metadata, replicas, selector, status) and drops its pod template and
// managedFields, most of its size: 1,000 CRs hold 1,000 of them. Nothing
// writes a cached Deployment back (Helm applies them), and a read that
// needs the whole object goes to the API server.
func slimDeployment(obj any) (any, error) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return obj, nil
	}
	d.ManagedFields = nil
	d.Spec = appsv1.DeploymentSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector}
	return d, nil
}

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	// Watches are the kinds to render and their settings (Watches).
	Watches []watches.Watch
	// ServerHTTPClient reaches the servers the kinds run, for what their
	// status says of them (version, providers, health); nil: a plain client
	// with the kinds' own timeouts.
	ServerHTTPClient *http.Client
	// Namespaces to watch; empty watches all.
	Namespaces []string
	// MetricsAddr and ProbeAddr are bind addresses; "0" disables.
	MetricsAddr, ProbeAddr string
	// InsecureMetrics serves metrics over plain HTTP to anyone; by default
	// they are served over HTTPS to clients the API server authenticates and
	// authorizes (get on the non-resource URL /metrics).
	InsecureMetrics bool
	// MetricsServing is how the metrics endpoint speaks TLS: HTTP/1.1 only
	// and a self-signed certificate generated at start when zero
	// (--metrics-enable-http2, --metrics-cert-dir).
	MetricsServing metricsauth.Serving
	// LeaderElection and its lease namespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election; the
	// Default* constants when 0.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// PendingGrace is how long a pending release (left by a killed
	// process) is left alone; release.DefaultPendingGrace when 0.
	PendingGrace time.Duration
	// PprofAddr serves net/http/pprof (profiles, traces); "" or "0" disables.
	PprofAddr string
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
	// LMEvalJobs serves LMEvalJob when the API server serves its CRD, with
	// DriverImage as the default lmes-driver-image.
	LMEvalJobs  bool
	DriverImage string
}

// NewManager builds the operator's manager: the scheme, caches limited by
// label, one reconciler per watched kind, and health checks.
func NewManager(cfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	if o.OperatorNamespace == "" {
		return nil, errNoOperatorNamespace
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	cacheOpts, err := CacheOptions(o.Watches, o.Namespaces)
	if err != nil {
		return nil, err
	}
	own := owned(o, dc)
	for _, c := range own {
		c.cache(&cacheOpts)
	}
	metrics, err := metricsOptions(o)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: Scheme(),
		Cache:  cacheOpts,
		// Reads of ConfigMaps and Secrets go to the API server: they are read
		// by name, on demand, and never cached with their data.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}}},
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// The process ends when the manager stops, so stepping down at once
		// is safe, and a rolling update hands over without waiting a lease.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 orDefault(o.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:                 orDefault(o.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:                   orDefault(o.RetryPeriod, DefaultRetryPeriod),
		PprofBindAddress:              pprofAddr(o.PprofAddr),
		Controller:                    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	ms, err := metas(o.Watches)
	if err != nil {
		return nil, err
	}
	detector := release.NewCapabilityDetector(dc, dc, o.CapabilityTTL, ms)
	deps := Deps{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorderFor(release.ManagedBy), //nolint:staticcheck // core/v1 Events, as upstream's operators write them (kuttl suites and users read them with kubectl get events)
		Capabilities:      detector.Capabilities,
		OperatorNamespace: o.OperatorNamespace,
		SettingsConfigMap: o.SettingsConfigMap,
		Bundles:           &cabundle.Cache{},
		// Every kind's reconciler watches ConfigMap metadata (ConfigMapRefs).
		ConfigMapMetadata: mgr.GetCache(),
		HTTPClient:        o.ServerHTTPClient,
	}
	prefixes := map[string]string{}
	for _, m := range ms {
		prefixes[m.GVK.Kind] = m.ReleasePrefix
	}
	releases, err := release.NewReleases(mgr.GetConfig(), mgr.GetRESTMapper(), o.OperatorNamespace, prefixes)
	if err != nil {
		return nil, err
	}
	var kinds []release.Registered
	for _, w := range o.Watches {
		k, err := KindFor(w, deps)
		if err != nil {
			return nil, err
		}
		c, err := charts.Load(w.Chart)
		if err != nil {
			return nil, err
		}
		r, err := release.NewReconciler(
			release.WithClient(mgr.GetClient()),
			release.WithKind(k),
			release.WithChart(c),
			release.WithReleases(releases),
			release.WithEventRecorder(deps.Recorder),
			release.WithMaxReleaseHistory(w.MaxReleaseHistory),
			release.WithReconcilePeriod(w.Period()),
			release.WithMaxConcurrentReconciles(w.MaxConcurrentReconciles),
			release.WithHelmCapabilities(detector.HelmCapabilities),
			// CacheOptions keeps a Deployment's metadata, replicas and status only.
			release.WithPartialCopies(&appsv1.Deployment{}),
			release.WithCapabilities(detector.Capabilities, capabilityTTL(o.CapabilityTTL)),
			release.WithNamespaces(o.Namespaces),
			release.WithPendingGrace(o.PendingGrace),
		)
		if err != nil {
			return nil, err
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("set up %s controller: %w", w.Kind, err)
		}
		kinds = append(kinds, k)
	}
	for _, c := range own {
		if err := c.setup(ownSetup{mgr: mgr, deps: deps, opts: o, discovery: dc, cache: cacheOpts}); err != nil {
			return nil, fmt.Errorf("set up %s controller: %w", c.gvk.Kind, err)
		}
	}
	if err := mgr.Add(release.NewSweeper(mgr.GetClient(), mgr.GetAPIReader(), o.OperatorNamespace, kinds, o.Namespaces, o.ReleaseSweepPeriod)); err != nil {
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

func orDefault(d, def time.Duration) *time.Duration {
	if d <= 0 {
		d = def
	}
	return &d
}

func pprofAddr(a string) string {
	if a == "0" {
		return ""
	}
	return a
}

// capabilityTTL is how often optional APIs are looked for.
func capabilityTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Minute
	}
	return d
}

// metricsOptions serves metrics over HTTPS (HTTP/1.1 unless HTTP/2 is asked
// for; the certificate of MetricsServing.CertDir, else a self-signed one) to
// authenticated and authorized clients only: a TokenReview and a
// SubjectAccessReview per scrape, cached, as kubebuilder scaffolds
// (pkg/metricsauth; controller-runtime's filter would link k8s.io/apiserver).
func metricsOptions(o ManagerOptions) (metricsserver.Options, error) {
	if o.InsecureMetrics || o.MetricsAddr == "0" {
		return metricsserver.Options{BindAddress: o.MetricsAddr}, nil
	}
	tlsOpts, err := o.MetricsServing.TLSOpts(ctrl.Log.WithName("metrics"))
	if err != nil {
		return metricsserver.Options{}, err
	}
	return metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: true, FilterProvider: metricsFilter, TLSOpts: tlsOpts}, nil
}

// metricsFilter is a metricsserver.FilterProvider.
func metricsFilter(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	cs, err := kubernetes.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	guard := metricsauth.New(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews())
	return func(log logr.Logger, next http.Handler) (http.Handler, error) { return guard.Wrap(log, next), nil }, nil
}
