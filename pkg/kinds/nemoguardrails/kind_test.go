package nemoguardrails

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func cr(configs ...nemov1alpha1.NemoConfig) *nemov1alpha1.NemoGuardrails {
	return &nemov1alpha1.NemoGuardrails{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}, Spec: nemov1alpha1.NemoGuardrailsSpec{NemoConfigs: configs}}
}

// CONFIG_ID is upstream's rule: the first entry marked default, else the first.
func TestDefaultConfig(t *testing.T) {
	a, b, c := nemov1alpha1.NemoConfig{Name: "a"}, nemov1alpha1.NemoConfig{Name: "b", Default: true}, nemov1alpha1.NemoConfig{Name: "c", Default: true}
	assert.Equal(t, "a", defaultConfig([]nemov1alpha1.NemoConfig{a}))
	assert.Equal(t, "b", defaultConfig([]nemov1alpha1.NemoConfig{a, b, c}))
	assert.Equal(t, "", defaultConfig(nil))
}

func TestTranslate(t *testing.T) {
	one := nemov1alpha1.NemoConfig{Name: "safety", ConfigMaps: []string{"cm1", "cm2"}}
	obj := cr(one)
	obj.Annotations = map[string]string{nemov1alpha1.AuthAnnotation: "True"}
	v, err := translate(obj, valuesInputs{Settings: Settings{Image: "img", ProxyImage: "proxy", IngressDomain: "apps.example.com"}, ConfigHash: "h", TrustConfigMap: "g-merged-ca-bundle", TrustHash: "t"})
	require.NoError(t, err)
	assert.True(t, v.Auth, "the annotation in any case, as upstream reads it")
	assert.Equal(t, int32(1), v.Replicas)
	assert.Equal(t, "safety", v.DefaultConfig)
	assert.Equal(t, []configValues{{Name: "safety", ConfigMaps: []string{"cm1", "cm2"}}}, v.Configs)
	assert.Equal(t, map[string]string{AnnotationConfigHash: "h", AnnotationCABundleHash: "t"}, v.PodAnnotations)
	assert.Equal(t, "g.ns.apps.example.com", v.Ingress.Host, "no Route API: the Ingress")
	assert.NotNil(t, v.Env, "an empty list, not null, overrides the chart's default")

	for name, c := range map[string]struct {
		configs []nemov1alpha1.NemoConfig
		field   string
	}{
		"no ConfigMaps":   {[]nemov1alpha1.NemoConfig{{Name: "a"}}, "spec.nemoConfigs[0].configMaps"},
		"empty ConfigMap": {[]nemov1alpha1.NemoConfig{{Name: "a", ConfigMaps: []string{"x", ""}}}, "spec.nemoConfigs[0].configMaps[1]"},
		"same name twice": {[]nemov1alpha1.NemoConfig{one, one}, "spec.nemoConfigs[1].name"},
	} {
		_, err := translate(cr(c.configs...), valuesInputs{})
		var f *status.Failure
		require.ErrorAs(t, err, &f, name)
		assert.Equal(t, c.field, f.Field, name)
	}
	neg := cr(one)
	neg.Spec.Replicas = ptr.To[int32](-1)
	_, err = translate(neg, valuesInputs{})
	assert.ErrorContains(t, err, "spec.replicas")
}

// An unchanged observation gives an identical status; the conditions say
// what is not ready.
func TestComputeStatus(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	dep := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}}
	o := observed{Observed: status.Observed{Generation: 1, Applied: true, Now: now}, Replicas: 1, Deployment: dep, Namespace: "ns", Name: "g"}
	st := computeStatus(nemov1alpha1.NemoGuardrailStatus{}, o)
	assert.Equal(t, PhaseReady, st.Phase)
	assert.Nil(t, findCond(st, TypeRouteReady), "nothing exposes the server: no RouteReady")
	o.Now = metav1.NewTime(time.Unix(2000, 0))
	assert.Equal(t, st, computeStatus(st, o), "stable")

	o.RouteRendered = true
	pending := computeStatus(st, o)
	assert.Equal(t, PhaseProgressing, pending.Phase)
	assert.Equal(t, "RouteNotReady", findCond(pending, TypeRouteReady).Reason)
	assert.Equal(t, metav1.ConditionFalse, findCond(pending, TypeReconcileComplete).Status)

	o.Failure = status.Invalid("spec.nemoConfigs[0].name", "bad")
	failed := computeStatus(st, o)
	assert.Equal(t, PhaseError, failed.Phase)
	assert.Contains(t, findCond(failed, status.TypeReconciled).Message, "spec.nemoConfigs[0].name")

	o = observed{Observed: status.Observed{Generation: 1, Applied: true, Now: now}, Replicas: 1, Deployment: dep, MCPGateway: true}
	mcp := computeStatus(nemov1alpha1.NemoGuardrailStatus{}, o)
	assert.Equal(t, "NotSupported", findCond(mcp, TypeMCPGatewayConfigured).Reason)
	require.NotNil(t, mcp.MCP)
	assert.False(t, mcp.MCP.MCPGatewayFound)
	assert.Equal(t, PhaseReady, mcp.Phase, "the server runs without the gateway's filter")
}

func findCond(st nemov1alpha1.NemoGuardrailStatus, t string) *metav1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// A Route waiting for a router is looked at again after 10 s, then as
// long as it has waited, at most every 10 minutes; an admitted one is not.
func TestRouteRecheckBacksOff(t *testing.T) {
	k := &Kind{}
	cr := &nemov1alpha1.NemoGuardrails{}
	assert.Zero(t, k.Recheck(cr), "no RouteReady: nothing to wait for")
	cr.Status.Conditions = []metav1.Condition{{Type: TypeRouteReady, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(time.Now().Add(-40 * time.Second))}}
	assert.InDelta(t, float64(40*time.Second), float64(k.Recheck(cr)), float64(2*time.Second))
	cr.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-3 * time.Hour))
	assert.Equal(t, 10*time.Minute, k.Recheck(cr))
	cr.Status.Conditions[0].Status = metav1.ConditionTrue
	assert.Zero(t, k.Recheck(cr))
}

// Images: our key, then RELATED_IMAGE_, then upstream's key, then the default.
func TestParseSettingsImages(t *testing.T) {
	s, err := ParseSettings(nil, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultImage, s.Image)
	s, _ = ParseSettings(nil, nil, map[string]string{KeyImage: "up"})
	assert.Equal(t, "up", s.Image)
	s, _ = ParseSettings([]string{EnvImage + "=env"}, nil, map[string]string{KeyImage: "up"})
	assert.Equal(t, "env", s.Image)
	s, _ = ParseSettings([]string{EnvImage + "=env"}, map[string]string{KeyImage: "ours"}, map[string]string{KeyImage: "up"})
	assert.Equal(t, "ours", s.Image)
	_, err = ParseSettings(nil, map[string]string{KeyCrossNamespaceCABundles: "maybe"}, nil)
	assert.ErrorContains(t, err, KeyCrossNamespaceCABundles)
}
