package trustyai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Off OpenShift without trustyai-ingress-domain nothing exposes the service,
// by design: RouteAvailable goes (no False condition to recheck every 10 s)
// and Ready does not wait for it.
func TestNotExposedIsNotAProblem(t *testing.T) {
	o := observed{Observed: status.Observed{Generation: 2, Applied: true, Now: t0}, Replicas: 1, Deployment: readyDeployment(1)}
	prev := trustyv1.TrustyAIServiceStatus{Conditions: []metav1.Condition{{Type: TypeRouteAvailable, Status: metav1.ConditionTrue, Reason: "IngressCreated"}}}
	st := computeStatus(prev, o)
	assert.Nil(t, find(st.Conditions, TypeRouteAvailable), "the Ingress of an earlier setting is gone")
	assert.Equal(t, trustyv1.PhaseReady, st.Phase)
	assert.Zero(t, (&Kind{}).Recheck(&trustyv1.TrustyAIService{Status: st}))

	// A release that runs while the current spec is refused: the same.
	o.Failure = &status.Failure{Reason: status.ReasonInvalidSpec, Message: "bad"}
	st = computeStatus(prev, o)
	assert.Nil(t, find(st.Conditions, TypeRouteAvailable))

	// With the setting, the Ingress and its host.
	o.Failure, o.Ingress, o.IngressHost = nil, true, "x.team-a.apps.example.com"
	st = computeStatus(prev, o)
	c := find(st.Conditions, TypeRouteAvailable)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, "IngressCreated", c.Reason)
	assert.Contains(t, c.Message, "https://x.team-a.apps.example.com")
	assert.Equal(t, trustyv1.PhaseReady, st.Phase)
}
