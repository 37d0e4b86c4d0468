package llamastack

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"k8s.io/utils/ptr"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func dep(gen, observed int64, updated, available int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation = gen
	d.Status.ObservedGeneration = observed
	d.Status.UpdatedReplicas = updated
	d.Status.AvailableReplicas = available
	return d
}

func withReplicas(d *appsv1.Deployment, n int32) *appsv1.Deployment {
	d.Status.Replicas = n
	return d
}

func stuck(d *appsv1.Deployment) *appsv1.Deployment {
	d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})
	return d
}

func refused(d *appsv1.Deployment) *appsv1.Deployment {
	d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found`})
	return d
}

func TestLlamaStackPhases(t *testing.T) {
	tests := []struct {
		name      string
		obs       observed
		phase     llamav1alpha1.DistributionPhase
		ready     metav1.ConditionStatus
		depReason string
	}{
		{"nothing yet", observed{Replicas: 1}, llamav1alpha1.PhasePending, metav1.ConditionFalse, "DeploymentNotFound"},
		{"applied, no pods", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: dep(1, 1, 0, 0)}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "ReplicasUnavailable"},
		{"rollout not observed", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: dep(2, 1, 1, 1)}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "RolloutInProgress"},
		{"ready", observed{Observed: status.Observed{Applied: true}, Replicas: 2, Deployment: dep(1, 1, 2, 2)}, llamav1alpha1.PhaseReady, metav1.ConditionTrue, "MinimumReplicasAvailable"},
		{"old pods still serve", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: withReplicas(dep(2, 2, 1, 1), 2)}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "RolloutInProgress"},
		{"rollout stuck", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: stuck(withReplicas(dep(2, 2, 1, 1), 2))}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "RolloutStuck"},
		{"pods refused", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: refused(dep(1, 1, 0, 0))}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "PodCreationFailed"},
		{"new pods refused, old pods serve", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: refused(withReplicas(dep(2, 2, 0, 1), 1))}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "PodCreationFailed"},
		{"new CR stuck", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: stuck(withReplicas(dep(1, 1, 1, 0), 1))}, llamav1alpha1.PhaseInitializing, metav1.ConditionFalse, "RolloutStuck"},
		{"scaled to zero", observed{Observed: status.Observed{Applied: true}, Replicas: 0, Deployment: dep(1, 1, 0, 0)}, llamav1alpha1.PhaseReady, metav1.ConditionTrue, "ScaledToZero"},
		{"invalid spec keeps the old pods", observed{Observed: status.Observed{Failure: &status.Failure{Reason: "InvalidSpec", Message: "bad"}, Applied: true}, Replicas: 1, Deployment: dep(1, 1, 1, 1)}, llamav1alpha1.PhaseFailed, metav1.ConditionFalse, "MinimumReplicasAvailable"},
		{"deleting", observed{Observed: status.Observed{Applied: true, Deleting: true}, Replicas: 1}, llamav1alpha1.PhaseTerminating, metav1.ConditionFalse, "DeploymentNotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.obs.Generation = 4
			tt.obs.Now = t0
			tt.obs.ServiceFound = true
			st := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, tt.obs)
			assert.Equal(t, tt.phase, st.Phase)
			assert.Equal(t, int64(4), st.ObservedGeneration)
			ready := meta.FindStatusCondition(st.Conditions, status.TypeReady)
			require.NotNil(t, ready)
			assert.Equal(t, tt.ready, ready.Status)
			assert.Equal(t, int64(4), ready.ObservedGeneration)
			assert.Equal(t, tt.depReason, meta.FindStatusCondition(st.Conditions, status.TypeDeploymentReady).Reason)
			reconciled := meta.FindStatusCondition(st.Conditions, status.TypeReconciled)
			if tt.obs.Failure != nil {
				assert.Equal(t, metav1.ConditionFalse, reconciled.Status)
				assert.Equal(t, tt.obs.Failure.Reason, reconciled.Reason)
				assert.Equal(t, tt.obs.Failure.Reason, ready.Reason)
			} else {
				assert.Equal(t, metav1.ConditionTrue, reconciled.Status)
			}
		})
	}
}

func TestLlamaStackIsStableAndKeepsTransitionTimes(t *testing.T) {
	obs := observed{Observed: status.Observed{Generation: 1, Applied: true, Now: t0}, Replicas: 1, Deployment: dep(1, 1, 0, 0), OperatorVersion: "v1", ServiceURL: "http://x", ServiceFound: true}
	first := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, obs)

	obs.Now = t1
	again := computeStatus(first, obs)
	assert.Equal(t, first, again, "an unchanged observation must give an identical status")

	obs.Deployment = dep(1, 1, 1, 1)
	ready := computeStatus(again, obs)
	assert.Equal(t, t1, meta.FindStatusCondition(ready.Conditions, status.TypeReady).LastTransitionTime)
	assert.Equal(t, t0, meta.FindStatusCondition(ready.Conditions, status.TypeReconciled).LastTransitionTime, "unchanged conditions keep their time")
	assert.Equal(t, int32(1), ready.AvailableReplicas)
	assert.Equal(t, &t0, ready.Version.LastUpdated)

	tr := status.Transitions(again.Conditions, ready.Conditions)
	require.Len(t, tr, 2)
	assert.Equal(t, status.TypeDeploymentReady, tr[0].Condition.Type)
	assert.Equal(t, status.TypeReady, tr[1].Condition.Type)
}

func TestServiceMissingIsNotReady(t *testing.T) {
	st := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, observed{Observed: status.Observed{Generation: 1, Applied: true, Now: t0}, Replicas: 1, Deployment: dep(1, 1, 1, 1)})
	assert.Equal(t, "ServiceNotFound", meta.FindStatusCondition(st.Conditions, status.TypeServiceReady).Reason)
	assert.Equal(t, "ServiceNotFound", meta.FindStatusCondition(st.Conditions, status.TypeReady).Reason)
	assert.Equal(t, llamav1alpha1.PhaseInitializing, st.Phase)
}

func TestConditionMessagesAreCapped(t *testing.T) {
	long := strings.Repeat("é", 2000) // 4000 bytes, two per rune
	st := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, observed{Observed: status.Observed{Generation: 1, Failure: &status.Failure{Reason: "InvalidSpec", Message: long}}})
	for _, c := range st.Conditions {
		if len(c.Message) > status.MaxMessage || !utf8.ValidString(c.Message) {
			t.Fatalf("condition %s: %d bytes, valid UTF-8 %v", c.Type, len(c.Message), utf8.ValidString(c.Message))
		}
	}
}

// observe derives what the status needs from the CR, its inputs and the
// reconcile, before any object is read back.
func TestObserve(t *testing.T) {
	now := metav1.Unix(100, 0)
	obs := release.Observation{Now: now, Applied: true, Objects: []release.ObjectRef{{Kind: "Deployment", Name: "demo"}, {Kind: "Service", Name: "demo-service"}}}
	in := &Inputs{settings: Settings{Distributions: map[string]string{"starter": "img"}}, trust: trust.Outcome{Wanted: true, Reason: trust.ReasonConfigMapNotFound}}

	o := observe(newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Generation = 4
		cr.Spec.Replicas = 3
		cr.Spec.Server.ContainerSpec.Port = 9000
		cr.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
	}), in, obs, "v9")
	assert.Equal(t, int64(4), o.Generation)
	assert.Equal(t, int32(3), o.Replicas)
	assert.True(t, o.Applied)
	assert.Equal(t, "v9", o.OperatorVersion)
	assert.Equal(t, now, o.Now)
	assert.Equal(t, "starter", o.ActiveDistribution)
	assert.Equal(t, map[string]string{"starter": "img"}, map[string]string(o.AvailableDistributions))
	assert.Equal(t, trust.ReasonConfigMapNotFound, o.Trust.Reason)
	assert.Equal(t, "http://demo-service.team-a.svc.cluster.local:9000", o.ServiceURL)
	tls := observe(newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.Config = &llamav1alpha1.ServerConfig{Server: &llamav1alpha1.ServerSettings{TLSCertFile: "/t/c", TLSKeyFile: "/t/k"}}
	}), in, obs, "v9")
	assert.Equal(t, "https://demo-service.team-a.svc.cluster.local:8321", tls.ServiceURL, "a server with TLS is reached over https")
	require.NotNil(t, o.StorageRequested)
	assert.Equal(t, llamav1alpha1.DefaultStorageSize, o.StorageRequested.String())

	assert.Nil(t, o.AllowedFrom, "no spec.network.allowedFrom, no condition")

	// Autoscaling: ready means the HPA's minimum is available: the largest
	// of 1, spec.replicas and minReplicas, at most maxReplicas.
	o = observe(newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Replicas = 5
		cr.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MaxReplicas: 4}
	}), nil, release.Observation{}, "v9")
	assert.Equal(t, int32(4), o.Replicas)
	o = observe(newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Replicas = 1
		cr.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MaxReplicas: 4}
	}), nil, release.Observation{}, "v9")
	assert.Equal(t, int32(1), o.Replicas)
	assert.Empty(t, o.ServiceURL, "no Service in the release yet")
	assert.Nil(t, o.StorageRequested)
	assert.False(t, o.Trust.Wanted, "no inputs (Gather failed): nothing is known of trust")
	o = observe(newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 4}
		cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "my/image:1"}
	}), nil, release.Observation{}, "v9")
	assert.Equal(t, int32(2), o.Replicas)
	assert.Equal(t, "custom", o.ActiveDistribution, "an image given directly is the custom distribution, as upstream says")
}

// spec.network.allowedFrom entries that can match no namespace are reported
// by AllowedFromValid, a warning condition (its transitions to False come
// with a Warning event, its recovery with a Normal one); the condition is
// there only while allowedFrom is set, and comes after Ready.
func TestAllowedFromCondition(t *testing.T) {
	assert.Contains(t, Meta().WarningConditions, TypeAllowedFromValid, "transitions come with events")

	bad := newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Generation = 1
		cr.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &llamav1alpha1.AllowedFromSpec{
			Namespaces: []string{"team-b", "nsA"},
			Labels:     []string{"team=frontend", "a b"},
		}}
	})
	obs := observe(bad, nil, release.Observation{Now: t0, Applied: true}, "v1")
	obs.Deployment, obs.ServiceFound = dep(1, 1, 1, 1), true
	st := computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, obs)
	c := meta.FindStatusCondition(st.Conditions, TypeAllowedFromValid)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "EntriesIgnored", c.Reason)
	assert.Equal(t, int64(1), c.ObservedGeneration)
	for _, want := range []string{
		"2 entries are left out of the NetworkPolicy",
		`spec.network.allowedFrom.namespaces[1] "nsA" is not a namespace name`,
		`did you mean "nsa"?`,
		`spec.network.allowedFrom.labels[1] "a b" is neither a label key`,
	} {
		assert.Contains(t, c.Message, want)
	}
	assert.NotContains(t, c.Message, "team-b")
	assert.NotContains(t, c.Message, "labels[0]", "key=value is a label with a value")
	assert.NotContains(t, c.Message, "namespaces[0]")
	assert.Equal(t, TypeAllowedFromValid, st.Conditions[len(st.Conditions)-1].Type, "after Ready")
	assert.Equal(t, llamav1alpha1.PhaseReady, st.Phase, "a warning: the rest of the spec applies and serves")
	tr := status.Transitions(nil, st.Conditions)
	assert.Contains(t, tr, status.Transition{Condition: *c}, "a new False condition is a transition (a Warning event)")

	// Fixed: True, a transition (the Normal event of its recovery).
	fixed := bad.DeepCopy()
	fixed.Generation = 2
	fixed.Spec.Network.AllowedFrom = &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"team-b", "nsa"}, Labels: []string{"team=frontend"}}
	obs2 := observe(fixed, nil, release.Observation{Now: t1, Applied: true}, "v1")
	obs2.Deployment, obs2.ServiceFound = dep(2, 2, 1, 1), true
	st2 := computeStatus(st, obs2)
	c2 := meta.FindStatusCondition(st2.Conditions, TypeAllowedFromValid)
	require.NotNil(t, c2)
	assert.Equal(t, metav1.ConditionTrue, c2.Status)
	assert.Equal(t, "AllEntriesValid", c2.Reason)
	tr = status.Transitions(st.Conditions, st2.Conditions)
	require.Len(t, tr, 1)
	assert.Equal(t, TypeAllowedFromValid, tr[0].Condition.Type)

	// allowedFrom removed: no condition.
	gone := fixed.DeepCopy()
	gone.Spec.Network.AllowedFrom = nil
	obs3 := observe(gone, nil, release.Observation{Now: t1, Applied: true}, "v1")
	obs3.Deployment, obs3.ServiceFound = dep(2, 2, 1, 1), true
	assert.Nil(t, meta.FindStatusCondition(computeStatus(st2, obs3).Conditions, TypeAllowedFromValid))

	// One entry: singular.
	one := newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"Bad_NS"}}}
	})
	c = allowedFromCondition(one.Spec.Network)
	require.NotNil(t, c)
	assert.True(t, strings.HasPrefix(c.Message, `1 entry is left out of the NetworkPolicy (the rest of the spec applies): spec.network.allowedFrom.namespaces[0] "Bad_NS" is not a namespace name`), c.Message)
	assert.NotContains(t, c.Message, "did you mean", "no lowercase form is a name either")
}

// A server that requires client certificates is never asked: HealthCheck is
// Unknown and says why, and the service URL is https.
func TestServerRequiringClientCertsIsNotAsked(t *testing.T) {
	obs := observed{Observed: status.Observed{Generation: 1, Applied: true, Now: t0}, Replicas: 1, Deployment: dep(1, 1, 1, 1), ServiceFound: true, ServerRequiresClientCerts: true}
	c := meta.FindStatusCondition(computeStatus(llamav1alpha1.LlamaStackDistributionStatus{}, obs).Conditions, TypeHealthCheck)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionUnknown, c.Status)
	assert.Equal(t, ReasonHealthCheckNotAsked, c.Reason)
	assert.Contains(t, c.Message, "tlsCAFile")
}
