// Package integration runs the operator's real manager against a real
// kube-apiserver and etcd (controller-runtime envtest; KUBEBUILDER_ASSETS from
// `hack/tools.sh assets`). There is no kubelet: Deployments get no pods, so
// tests write Deployment status themselves where status depends on pods.
package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The operator's namespace and settings ConfigMap in the suite.
const (
	operatorNamespace = framework.OperatorNamespace
	settingsConfigMap = framework.SettingsConfigMap
	// upstreamLlamaConfigMap is llama-stack-k8s-operator's ConfigMap.
	upstreamLlamaConfigMap = "llama-stack-operator-config"
)

// reconcilePeriod is short so that "unchanged CR -> no writes" is checked
// across many reconciles.
const reconcilePeriod = 300 * time.Millisecond

var (
	// env is the suite's API server as the tests see it; k8s its client.
	env        *framework.Env
	k8s        client.Client
	clientset  *kubernetes.Clientset
	restConfig *rest.Config
	// operatorWrites counts every request the operator sends that is not a
	// read; operatorReleaseReads its reads of Helm's release storage;
	// operatorSecretRequests any request of it about Secrets (there must be none).
	operatorWrites, operatorReleaseReads, operatorSecretRequests atomic.Int64
	// operatorRequests has every request the operator sends.
	operatorRequests requestLog
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the control plane into bin/)")
		return 1
	}
	level := zapcore.ErrorLevel
	if os.Getenv("TEST_VERBOSE") != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(level)))
	root := filepath.Join("..", "..")
	testEnv := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		}
	}()

	fakeLlamaStack = startFakeLlamaStack()
	defer fakeLlamaStack.Close()
	mgr, err := newOperator(cfg, countingTransport{writes: &operatorWrites, releaseReads: &operatorReleaseReads, secrets: &operatorSecretRequests, log: &operatorRequests}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()

	// Tests read and write through a direct client: what they see is the API server's truth.
	if env, err = framework.NewEnv(cfg, 30*time.Second); err != nil {
		return framework.Fail(err)
	}
	k8s = env.Client
	clientset = kubernetes.NewForConfigOrDie(cfg)
	restConfig = cfg
	if err := framework.CreateOperatorNamespace(k8s); err != nil {
		return framework.Fail(err)
	}
	// The suite runs as a switching administrator would: upstream's
	// ConfigMap turns NetworkPolicies on (they are off by default, as
	// upstream), so that the tests see them.
	if err := k8s.Create(context.Background(), upstreamLlamaConfig(true)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newOperator builds the operator as the suite runs it: the repository's
// watches.yaml with the suite's reconcile period, capabilities remembered
// for 500 ms, a sweep every second, and its requests counted by counts;
// tune changes the options.
func newOperator(cfg *rest.Config, counts countingTransport, tune func(*operator.ManagerOptions)) (manager.Manager, error) {
	operatorCfg := rest.CopyConfig(cfg)
	operatorCfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		counts.next = rt
		return counts
	}
	return framework.NewManager(operatorCfg, func(o *operator.ManagerOptions) {
		for i := range o.Watches {
			o.Watches[i].ReconcilePeriod = &metav1.Duration{Duration: reconcilePeriod}
		}
		// Every server the operator asks is the suite's fake llama-stack.
		o.ServerHTTPClient = fakeLlamaStack.client()
		o.CapabilityTTL, o.ReleaseSweepPeriod = 500*time.Millisecond, time.Second
		o.SkipControllerNameValidation = false
		if tune != nil {
			tune(o)
		}
	})
}

// upstreamLlamaConfig is llama-stack-k8s-operator's ConfigMap in the
// operator's namespace, with its NetworkPolicy feature flag.
func upstreamLlamaConfig(networkPolicy bool) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: upstreamLlamaConfigMap},
		Data:       map[string]string{"featureFlags": fmt.Sprintf("enableNetworkPolicy:\n  enabled: %t\n", networkPolicy)},
	}
}
