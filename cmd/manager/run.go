package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/memlimit"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/metricsauth"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
)

var errUsage = errors.New("usage")

func runCommand(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	watchesFile := fs.String("watches-file", "", "a watches file of reconcile settings per kind (reconcilePeriod, maxReleaseHistory, maxConcurrentReconciles), for those who tune a kind or serve a subset; empty: every kind with the defaults")
	metricsAddr := fs.String("metrics-bind-address", ":8443", "address of the metrics endpoint (HTTPS, authenticated and authorized); 0 disables it")
	insecureMetrics := fs.Bool("metrics-insecure", false, "serve metrics over plain HTTP without authentication (local development only)")
	var metricsServing metricsauth.Serving
	metricsServing.BindFlags(fs)
	probeAddr := fs.String("health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	leaderElect := fs.Bool("leader-elect", false, "elect a leader, so that only one replica reconciles")
	leaderNS := fs.String("leader-election-namespace", "", "namespace of the leader election lease (default: the operator's namespace)")
	leaseDuration := fs.Duration("leader-elect-lease-duration", operator.DefaultLeaseDuration, "how long a lease holds without renewal: a leader that dies without stepping down is replaced after this")
	renewDeadline := fs.Duration("leader-elect-renew-deadline", operator.DefaultRenewDeadline, "how long a leader retries renewing before it gives up and exits (longer than the API server outages it should ride out)")
	retryPeriod := fs.Duration("leader-elect-retry-period", operator.DefaultRetryPeriod, "how often leader election acts")
	qps := fs.Float64("kube-api-qps", -1, "client-side limit on requests per second to the API server; negative: none, API Priority and Fairness throttles on the server")
	burst := fs.Int("kube-api-burst", 0, "client-side burst above --kube-api-qps (with a positive QPS; 0: twice the QPS)")
	grace := fs.Duration("pending-release-grace", release.DefaultPendingGrace, "how long a release left pending (by a process killed mid-install or mid-upgrade) is left alone before it is marked failed and upgraded; must exceed the longest Helm action of a replica that lost its lease")
	pprof := fs.String("pprof-bind-address", "0", "address of net/http/pprof (/debug/pprof/: CPU profiles, traces); 0 disables it")
	operatorNS := fs.String("operator-namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace: holds the settings ConfigMap, allowed through NetworkPolicies (default: $POD_NAMESPACE)")
	settingsCM := fs.String("settings-configmap", "ai-stack-operator-config", "name of the settings ConfigMap in the operator's namespace (image-overrides, network-policy)")
	lmevalJobs := fs.Bool("serve-lmevaljob", true, "serve LMEvalJob when its CRD is installed (false: leave LMEvalJobs to another operator, such as upstream TrustyAI's LMES)")
	driverImage := fs.String("lmes-driver-image", "quay.io/ai-stack-operator/ai-stack-operator:"+version.Version, "the default image of LMEvalJob pods' driver (this operator's image, which holds /bin/driver); the lmes-driver-image setting overrides it")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")
	if os.Getenv("GOMEMLIMIT") == "" {
		// Under the container's limit the GC works harder before the kernel
		// kills the process (GOMEMLIMIT, when set, is the runtime's own).
		if limit, ok := memlimit.Soft(os.ReadFile); ok {
			debug.SetMemoryLimit(limit)
			log.Info("soft memory limit set below the container's", "bytes", limit, "fraction", memlimit.Fraction)
		}
	}

	if *pprof == "" || *pprof == "0" {
		// Nobody can read a heap profile: the runtime need not sample one
		// (its records of every sampled allocation site stay resident).
		runtime.MemProfileRate = 0
	}
	ws, err := operator.Watches(*watchesFile)
	if err != nil {
		return err
	}
	if *leaderNS == "" {
		// In a pod the operator's namespace is the in-cluster one; outside
		// one (make run, tests) this is where the lease belongs too.
		*leaderNS = *operatorNS
	}
	namespaces := watchNamespaces(os.Getenv("WATCH_NAMESPACE"))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubernetes config: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	if *qps > 0 && *burst <= 0 {
		cfg.Burst = int(2 * *qps)
	}
	mgr, err := operator.NewManager(cfg, operator.ManagerOptions{
		Watches:                 ws,
		Namespaces:              namespaces,
		MetricsAddr:             *metricsAddr,
		InsecureMetrics:         *insecureMetrics,
		MetricsServing:          metricsServing,
		ProbeAddr:               *probeAddr,
		LeaderElection:          *leaderElect,
		LeaderElectionNamespace: *leaderNS,
		LeaseDuration:           *leaseDuration,
		RenewDeadline:           *renewDeadline,
		RetryPeriod:             *retryPeriod,
		PprofAddr:               *pprof,
		PendingGrace:            *grace,
		OperatorNamespace:       *operatorNS,
		SettingsConfigMap:       *settingsCM,
		LMEvalJobs:              *lmevalJobs,
		DriverImage:             *driverImage,
	})
	if err != nil {
		return err
	}
	log.Info("starting manager", "version", version.Version, "namespaces", namespaces, "kinds", len(ws))
	ctx := ctrl.SetupSignalHandler()
	// After a burst of reconciles, hand the heap it grew to back to the
	// system once the process is quiet.
	go memlimit.ReleaseWhenIdle(ctx, memlimit.IdleInterval, memlimit.RuntimeSample, debug.FreeOSMemory)
	return mgr.Start(ctx)
}

// watchNamespaces parses WATCH_NAMESPACE: empty means all namespaces.
func watchNamespaces(v string) []string {
	var out []string
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}
