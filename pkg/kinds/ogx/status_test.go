package ogx

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func readyDeployment(replicas int32) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	d.Spec.Replicas = &replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	return d
}

func cond(st ogxv1beta1.OGXServerStatus, typ string) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, typ)
}

// Phases as upstream's: Pending before anything is applied, Initializing
// until the pods are ready, Ready, Failed on a refused spec (nothing
// running is touched), Terminating while deleted.
func TestStatusPhases(t *testing.T) {
	base := observed{Observed: status.Observed{Generation: 1, Now: t0}, Replicas: 1, ActiveDistribution: "starter", OperatorVersion: "v1"}
	assert.Equal(t, ogxv1beta1.OGXServerPhasePending, computeStatus(ogxv1beta1.OGXServerStatus{}, base).Phase)
	applied := base
	applied.Applied, applied.ServiceFound, applied.ServiceURL = true, true, "http://demo-service.team-a.svc.cluster.local:8321"
	assert.Equal(t, ogxv1beta1.OGXServerPhaseInitializing, computeStatus(ogxv1beta1.OGXServerStatus{}, applied).Phase)
	ready := applied
	ready.Deployment = readyDeployment(1)
	st := computeStatus(ogxv1beta1.OGXServerStatus{}, ready)
	assert.Equal(t, ogxv1beta1.OGXServerPhaseReady, st.Phase)
	assert.Equal(t, int32(1), st.AvailableReplicas)
	assert.Equal(t, "http://demo-service.team-a.svc.cluster.local:8321", st.ServiceURL)
	assert.Nil(t, st.ExternalURL, "no external access, no externalURL")
	assert.Equal(t, "v1", st.Version.OperatorVersion)
	assert.Equal(t, "starter", st.DistributionConfig.ActiveDistribution)
	assert.Equal(t, st, computeStatus(st, ready), "an unchanged observation changes nothing")
	later := ready
	later.Now = t1
	assert.Equal(t, st, computeStatus(st, later), "not even the times")

	failed := ready
	failed.Failure = status.Invalid("spec.distribution.name", "unknown")
	fst := computeStatus(st, failed)
	assert.Equal(t, ogxv1beta1.OGXServerPhaseFailed, fst.Phase)
	assert.Contains(t, cond(fst, status.TypeReady).Message, "spec.distribution.name")

	deleting := ready
	deleting.Deleting = true
	assert.Equal(t, ogxv1beta1.OGXServerPhaseTerminating, computeStatus(st, deleting).Phase)
}

// ConfigGenerated and status.configGeneration follow the mode: succeeded
// with the counts, failed naming the field, inactive without generation;
// generatedAt moves only with a new configuration.
func TestStatusConfigGeneration(t *testing.T) {
	g := &generated{ConfigMapName: "demo-config-0123456789abcdef", Providers: 3, Resources: 1, Version: 2, BaseSource: baseFromDistribution, BaseHash: "h"}
	obs := observed{Observed: status.Observed{Generation: 2, Now: t0}, Replicas: 1, Declarative: true, Generated: g, Image: "img"}
	st := computeStatus(ogxv1beta1.OGXServerStatus{}, obs)
	c := cond(st, ogxv1beta1.ConditionTypeConfigGenerated)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, ogxv1beta1.ReasonConfigGenerationSucceeded, c.Reason)
	assert.Contains(t, c.Message, "3 providers and 1 resources")
	require.NotNil(t, st.ConfigGeneration)
	assert.Equal(t, ogxv1beta1.ConfigGenerationStatus{ObservedGeneration: 2, ConfigMapName: g.ConfigMapName, GeneratedAt: t0, ProviderCount: 3, ResourceCount: 1, ConfigVersion: 2}, *st.ConfigGeneration)
	assert.Equal(t, &ogxv1beta1.ResolvedDistributionStatus{Image: "img", ConfigSource: baseFromDistribution, ConfigHash: "h"}, st.ResolvedDistribution)

	again := obs
	again.Now = t1
	assert.Equal(t, t0, computeStatus(st, again).ConfigGeneration.GeneratedAt, "the same configuration keeps its time")
	changed := again
	changed.Generated = &generated{ConfigMapName: "demo-config-fedcba9876543210"}
	assert.Equal(t, t1, computeStatus(st, changed).ConfigGeneration.GeneratedAt)

	bad := obs
	bad.Generated, bad.ConfigFailure = nil, &status.Failure{Reason: ogxv1beta1.ReasonConfigGenerationFailed, Field: "spec.resources.models[0].provider", Message: "no such provider"}
	bst := computeStatus(st, bad)
	c = cond(bst, ogxv1beta1.ConditionTypeConfigGenerated)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, c.Message, "spec.resources.models[0].provider")
	assert.Equal(t, st.ConfigGeneration, bst.ConfigGeneration, "the running configuration is still the last generated one")

	override := observed{Observed: status.Observed{Generation: 3, Now: t1}, Replicas: 1, OverrideHash: "oh", Image: "img"}
	ost := computeStatus(st, override)
	assert.Nil(t, ost.ConfigGeneration)
	assert.Equal(t, ogxv1beta1.ReasonConfigGenerationInactive, cond(ost, ogxv1beta1.ConditionTypeConfigGenerated).Reason)
	assert.Equal(t, "override", ost.ResolvedDistribution.ConfigSource)
}

// What the server says of itself: its version and providers, and
// HealthCheck from /v1/health (not merely the Deployment, as upstream).
func TestStatusFromTheServer(t *testing.T) {
	obs := observed{Observed: status.Observed{Generation: 1, Applied: true, Now: t0}, Replicas: 1, ServiceFound: true, Deployment: readyDeployment(1), ServerAsked: true}
	st := computeStatus(ogxv1beta1.OGXServerStatus{}, obs)
	assert.Equal(t, metav1.ConditionFalse, cond(st, ogxv1beta1.ConditionTypeHealthCheck).Status, "not answered yet")

	obs.Server = &stackserver.Answer{Version: "0.5.0", Healthy: true, Providers: []stackserver.Provider{{API: "inference", ProviderID: "vllm", ProviderType: "remote::vllm", Config: []byte(`{"u":1}`), Health: stackserver.Health{Status: "OK"}}}}
	st = computeStatus(st, obs)
	assert.Equal(t, "0.5.0", st.Version.ServerVersion)
	require.Len(t, st.DistributionConfig.Providers, 1)
	assert.Equal(t, `{"u":1}`, string(st.DistributionConfig.Providers[0].Config.Raw))
	assert.Equal(t, ogxv1beta1.ReasonHealthCheckPassed, cond(st, ogxv1beta1.ConditionTypeHealthCheck).Reason)

	obs.Server = &stackserver.Answer{Problem: "GET /v1/health: HTTP 503"}
	st = computeStatus(st, obs)
	assert.Equal(t, "0.5.0", st.Version.ServerVersion, "a server that says no version keeps the last one")
	assert.Contains(t, cond(st, ogxv1beta1.ConditionTypeHealthCheck).Message, "HTTP 503")

	url := ""
	obs.ExternalURL = &url
	assert.Equal(t, "", *computeStatus(st, obs).ExternalURL, "external access without an address yet: empty, not absent")
}
