package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// fakeLlamaStack answers for every llama-stack server the operator asks:
// the operator's HTTP client (its only seam) dials it whatever the host,
// and it counts the requests per host.
var fakeLlamaStack *fakeServers

type fakeServers struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
}

func startFakeLlamaStack() *fakeServers {
	f := &fakeServers{requests: map[string]int{}}
	mux := http.NewServeMux()
	count := func(r *http.Request) {
		f.mu.Lock()
		f.requests[r.Host]++
		f.mu.Unlock()
	}
	mux.HandleFunc("/v1/health", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		_, _ = w.Write([]byte(`{"status":"OK"}`))
	})
	mux.HandleFunc("/v1/version", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		_, _ = w.Write([]byte(`{"version":"0.7.1"}`))
	})
	mux.HandleFunc("/v1/providers", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		_, _ = w.Write([]byte(`{"data":[{"api":"inference","provider_id":"vllm","provider_type":"remote::vllm","config":{"url":"http://vllm:8000/v1"},"health":{"status":"OK","message":""}}]}`))
	})
	f.Server = httptest.NewServer(mux)
	return f
}

// client reaches the fake for any address.
func (f *fakeServers) client() *http.Client {
	addr := f.Listener.Addr().String()
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
}

// requestsFor counts the requests that named host.
func (f *fakeServers) requestsFor(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[host]
}

// markReady writes the status a Deployment controller writes once every
// replica of the current generation is available (envtest runs no
// controllers).
func markReady(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	env.UpdateStatus(t, d, func() {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	})
}

// Once its pods are ready, the server's version, providers and health are
// read over its Service into the status (the "Server Version" column, the
// providers, HealthCheck), at most once a minute: an idle distribution is
// not asked again on every reconcile. An image CR's active distribution is
// "custom", as upstream's.
func TestStatusFromTheServer(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "asked")
	cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "quay.io/me/llama:1"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitCondition(t, ns, "asked", "HealthCheck", metav1.ConditionFalse, "HealthCheckFailed")
	assert.Equal(t, "custom", got.Status.DistributionConfig.ActiveDistribution)
	assert.Empty(t, got.Status.Version.LlamaStackServerVersion)
	host := fmt.Sprintf("asked-service.%s.svc.cluster.local:8321", ns)
	assert.Zero(t, fakeLlamaStack.requestsFor(host), "no pod is ready: the server is not asked")

	markReady(t, ns, "asked", 1)
	got = waitCondition(t, ns, "asked", "HealthCheck", metav1.ConditionTrue, "HealthCheckPassed")
	assert.Equal(t, "0.7.1", got.Status.Version.LlamaStackServerVersion)
	require.Len(t, got.Status.DistributionConfig.Providers, 1)
	p := got.Status.DistributionConfig.Providers[0]
	assert.Equal(t, "vllm", p.ProviderID)
	assert.Equal(t, "OK", p.Health.Status)
	assert.JSONEq(t, `{"url":"http://vllm:8000/v1"}`, string(p.Config.Raw))
	assert.Equal(t, llamav1alpha1.PhaseReady, got.Status.Phase)
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReady).Status)

	// The suite reconciles every 300 ms: ten reconciles, one probe.
	time.Sleep(10 * reconcilePeriod)
	assert.Equal(t, 3, fakeLlamaStack.requestsFor(host), "one probe (three endpoints) within a minute")
}
