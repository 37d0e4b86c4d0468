package llamastack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// A probe's answer keeps everything in this API's types; no providers stays
// nil (the server did not say), an empty list stays empty.
func TestInfoOf(t *testing.T) {
	info := infoOf(stackserver.Answer{Version: "0.7.1", Healthy: true, Providers: []stackserver.Provider{
		{API: "inference", ProviderID: "vllm", ProviderType: "remote::vllm", Config: []byte(`{"url":"u"}`), Health: stackserver.Health{Status: "OK", Message: "m"}},
	}})
	assert.Equal(t, serverInfo{Version: "0.7.1", Healthy: true, Providers: []llamav1alpha1.ProviderInfo{{
		API: "inference", ProviderID: "vllm", ProviderType: "remote::vllm",
		Config: info.Providers[0].Config, Health: llamav1alpha1.ProviderHealthStatus{Status: "OK", Message: "m"}}}}, info)
	assert.Equal(t, `{"url":"u"}`, string(info.Providers[0].Config.Raw))
	assert.Nil(t, infoOf(stackserver.Answer{Problem: "x"}).Providers)
	assert.NotNil(t, infoOf(stackserver.Answer{Providers: []stackserver.Provider{}}).Providers)
}

// The status carries what the server said: its version (kept when it said
// none), its providers, and HealthCheck as upstream's (False while the pods
// are not ready); an unchanged answer gives an identical status.
func TestStatusFromTheServer(t *testing.T) {
	base := observed{Observed: status.Observed{Generation: 1, Applied: true, Now: t0}, Replicas: 1, Deployment: withReplicas(dep(1, 1, 1, 1), 1), ServiceFound: true}
	st := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, base)
	c := findCondition(st.Conditions, TypeHealthCheck)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, ReasonHealthCheckFailed, c.Reason)

	withServer := base
	withServer.Now = t1
	withServer.Server = &serverInfo{Version: "0.7.1", Healthy: true, Providers: []llamav1alpha1.ProviderInfo{{API: "inference", ProviderID: "vllm", ProviderType: "remote::vllm"}}}
	st = computeStatus(st, withServer)
	assert.Equal(t, "0.7.1", st.Version.LlamaStackServerVersion)
	assert.Len(t, st.DistributionConfig.Providers, 1)
	c = findCondition(st.Conditions, TypeHealthCheck)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, ReasonHealthCheckPassed, c.Reason)
	assert.Equal(t, st, computeStatus(st, withServer), "stable")

	waiting := withServer
	waiting.Server, waiting.ServerAsked = nil, true
	assert.Equal(t, st, computeStatus(st, waiting), "while the answer is on its way nothing changes")

	silent := withServer
	silent.Server = &serverInfo{Problem: "GET /v1/health: HTTP 503"}
	st = computeStatus(st, silent)
	assert.Equal(t, "0.7.1", st.Version.LlamaStackServerVersion, "the last version known stays")
	assert.Nil(t, st.DistributionConfig.Providers, "providers are cleared when the server does not list them")
	assert.Contains(t, findCondition(st.Conditions, TypeHealthCheck).Message, "HTTP 503")
}

func findCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
