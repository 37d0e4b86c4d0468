package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// patchCR applies a change to a LlamaStackDistribution with a merge patch.
func patchCR(t *testing.T, ns, name string, change func(*llamav1alpha1.LlamaStackDistribution)) {
	t.Helper()
	patchObject(t, ns, name, &llamav1alpha1.LlamaStackDistribution{}, change)
}

// patchObject reads an object into obj, changes it and sends the change as a merge patch.
func patchObject[T client.Object](t *testing.T, ns, name string, obj T, change func(T)) {
	t.Helper()
	require.NoError(t, env.Get(ns, name, obj))
	orig := obj.DeepCopyObject().(client.Object)
	change(obj)
	require.NoError(t, k8s.Patch(context.Background(), obj, client.MergeFrom(orig)))
}

func TestEveryObjectAndItsSwitch(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "full")
	// Three replicas with autoscaling from 2: the HPA's minimum is 3 (as upstream).
	cr.Spec.Replicas = 3
	cr.Spec.Server.Workers = ptr.To(int32(2))
	cr.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 4, TargetMemoryUtilizationPercentage: ptr.To(int32(75))}
	cr.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{
		ServiceAccountName:            "existing-sa",
		TerminationGracePeriodSeconds: ptr.To(int64(45)),
		Volumes:                       []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		VolumeMounts:                  []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
	}
	// "nsA" can match no namespace: left out and reported, the rest applies;
	// "team=frontend" is a label with a value.
	cr.Spec.Network = &llamav1alpha1.NetworkSpec{ExposeRoute: true, AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"clients", "nsA"}, Labels: []string{"llama-access", "team=frontend"}}}
	require.NoError(t, k8s.Create(context.Background(), cr))
	env.WaitLLSD(t, ns, "full", llamav1alpha1.PhaseInitializing)

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "full", dep))
	pod := dep.Spec.Template.Spec
	assert.Equal(t, "existing-sa", pod.ServiceAccountName)
	assert.Equal(t, int64(45), *pod.TerminationGracePeriodSeconds)
	// Default spread with more than one replica, as upstream: regions, zones, nodes.
	instance := &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": "full"}}
	require.Len(t, pod.TopologySpreadConstraints, 3, "default spread with more than one replica")
	for i, key := range []string{"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
		assert.Equal(t, corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: instance}, pod.TopologySpreadConstraints[i])
	}
	assert.Equal(t, "full", dep.Spec.Template.Labels["app.kubernetes.io/instance"], "the spread selects the pods")
	require.NotNil(t, pod.Affinity)
	assert.Equal(t, &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: instance, TopologyKey: "kubernetes.io/hostname"},
	}}}, pod.Affinity.PodAntiAffinity)
	c := pod.Containers[0]
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "LLAMA_STACK_WORKERS", Value: "2"})
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "HF_HOME", Value: "/.llama"})
	// As upstream: a CPU per worker, 1Gi whatever the workers; with workers set, limits = requests.
	assert.Equal(t, "2", ptr.To(c.Resources.Requests[corev1.ResourceCPU]).String())
	assert.Equal(t, "1Gi", ptr.To(c.Resources.Requests[corev1.ResourceMemory]).String())
	assert.Equal(t, "2", ptr.To(c.Resources.Limits[corev1.ResourceCPU]).String())
	assert.Equal(t, "1Gi", ptr.To(c.Resources.Limits[corev1.ResourceMemory]).String())
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "cache", MountPath: "/cache"})
	for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
		require.NotNil(t, p)
		assert.Equal(t, "/v1/health", p.HTTPGet.Path)
	}
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	require.Error(t, env.Get(ns, "full-sa", &corev1.ServiceAccount{}), "no ServiceAccount with podOverrides.serviceAccountName")

	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	require.NoError(t, env.Get(ns, "full-hpa", hpa))
	assert.Equal(t, int32(3), *hpa.Spec.MinReplicas, "the largest of 1, replicas and minReplicas")
	assert.Equal(t, int32(4), hpa.Spec.MaxReplicas)
	require.Len(t, hpa.Spec.Metrics, 1)
	assert.Equal(t, corev1.ResourceMemory, hpa.Spec.Metrics[0].Resource.Name)

	pdb := &policyv1.PodDisruptionBudget{}
	require.NoError(t, env.Get(ns, "full-pdb", pdb))
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MaxUnavailable)

	// envtest serves no Route API: exposure is an Ingress.
	ing := &networkingv1.Ingress{}
	require.NoError(t, env.Get(ns, "full-ingress", ing))
	assert.Equal(t, "full-service", ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)

	np := &networkingv1.NetworkPolicy{}
	require.NoError(t, env.Get(ns, "full-network-policy", np))
	require.Len(t, np.Spec.Ingress, 1)
	from := np.Spec.Ingress[0].From
	require.Len(t, from, 6, "same namespace, operator namespace, allowed namespaces, a label key, a label with a value, ingress controllers")
	assert.Equal(t, &metav1.LabelSelector{}, from[0].PodSelector)
	assert.Equal(t, operatorNamespace, from[1].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
	assert.Equal(t, []string{"clients"}, from[2].NamespaceSelector.MatchExpressions[0].Values, "nsA is left out")
	assert.Equal(t, "llama-access", from[3].NamespaceSelector.MatchExpressions[0].Key)
	assert.Equal(t, map[string]string{"team": "frontend"}, from[4].NamespaceSelector.MatchLabels)
	assert.Equal(t, int32(8321), np.Spec.Ingress[0].Ports[0].Port.IntVal)

	// The left-out entry is reported: a condition and a Warning event.
	got := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "full", got))
	af := condition(got, llamastack.TypeAllowedFromValid)
	require.NotNil(t, af)
	assert.Equal(t, metav1.ConditionFalse, af.Status)
	assert.Equal(t, llamastack.ReasonAllowedFromIgnored, af.Reason)
	assert.Contains(t, af.Message, `spec.network.allowedFrom.namespaces[1] "nsA" is not a namespace name`)
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReconciled).Status, "the rest of the spec applies")
	env.Eventually(t, "a Warning event "+llamastack.ReasonAllowedFromIgnored, func() error {
		list := &corev1.EventList{}
		if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "full" && e.Reason == llamastack.ReasonAllowedFromIgnored && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "namespaces[1]") {
				return nil
			}
		}
		return fmt.Errorf("no Warning event %s; events: %v", llamastack.ReasonAllowedFromIgnored, env.EventReasons(t, ns, "full"))
	})

	// Switch everything off: the objects go.
	patchCR(t, ns, "full", func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Replicas = 1
		c.Spec.Server.Autoscaling = nil
		c.Spec.Server.PodOverrides = nil
		c.Spec.Network = nil
	})
	env.Eventually(t, "HPA, PDB and Ingress to be removed", func() error {
		for name, obj := range map[string]client.Object{"full-hpa": &autoscalingv2.HorizontalPodAutoscaler{}, "full-pdb": &policyv1.PodDisruptionBudget{}, "full-ingress": &networkingv1.Ingress{}} {
			if err := env.Gone(ns, name, obj); err != nil {
				return err
			}
		}
		return env.Get(ns, "full-sa", &corev1.ServiceAccount{})
	})
	require.NoError(t, env.Get(ns, "full", dep))
	assert.Empty(t, dep.Spec.Template.Spec.TopologySpreadConstraints)
	assert.Nil(t, dep.Spec.Template.Spec.Affinity, "one replica: no anti-affinity")
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	env.Eventually(t, "AllowedFromValid to go with allowedFrom", func() error {
		if err := env.Get(ns, "full", got); err != nil {
			return err
		}
		if c := condition(got, llamastack.TypeAllowedFromValid); c != nil || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("generation %d/%d, AllowedFromValid %+v", got.Status.ObservedGeneration, got.Generation, c)
		}
		return nil
	})
}

func TestExplicitPDBAndSpread(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "explicit")
	cr.Spec.Server.PodDisruptionBudget = &llamav1alpha1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))}
	cr.Spec.Server.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule}}
	require.NoError(t, k8s.Create(context.Background(), cr))
	env.WaitLLSD(t, ns, "explicit", llamav1alpha1.PhaseInitializing)
	pdb := &policyv1.PodDisruptionBudget{}
	require.NoError(t, env.Get(ns, "explicit-pdb", pdb))
	assert.Equal(t, intstr.FromString("50%"), *pdb.Spec.MinAvailable)
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "explicit", dep))
	require.Len(t, dep.Spec.Template.Spec.TopologySpreadConstraints, 1)
	assert.Equal(t, int32(2), dep.Spec.Template.Spec.TopologySpreadConstraints[0].MaxSkew)

	// A single replica with no explicit budget has none.
	patchCR(t, ns, "explicit", func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.PodDisruptionBudget = nil })
	env.Eventually(t, "the PDB to go", func() error { return env.Gone(ns, "explicit-pdb", &policyv1.PodDisruptionBudget{}) })
}

func claimSize(t *testing.T, ns, name string) string {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, name, pvc))
	return ptr.To(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).String()
}

func TestStorageGrowsNeverShrinksAndIsKept(t *testing.T) {
	t.Parallel()
	// Expansion needs a StorageClass that allows it (the API server's
	// PersistentVolumeClaimResize admission) and a bound claim.
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: "expandable", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:          "example.com/none",
		AllowVolumeExpansion: ptr.To(true),
	}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), sc)))
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "disk")
	cr.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: ptr.To(resource.MustParse("5Gi"))}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := env.WaitLLSD(t, ns, "disk", llamav1alpha1.PhaseInitializing)
	assert.Equal(t, "ClaimPending", condition(got, status.TypeStorageReady).Reason)

	// Play the PV controller: bind the claim.
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "disk-pvc"}}
	env.UpdateStatus(t, pvc, func() {
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}}
	})
	env.Eventually(t, "StorageReady", func() error {
		cr := &llamav1alpha1.LlamaStackDistribution{}
		if err := env.Get(ns, "disk", cr); err != nil {
			return err
		}
		if c := condition(cr, status.TypeStorageReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("StorageReady %+v", c)
		}
		return nil
	})

	patchCR(t, ns, "disk", func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage.Size = ptr.To(resource.MustParse("8Gi"))
	})
	env.Eventually(t, "an expansion request", func() error {
		if s := claimSize(t, ns, "disk-pvc"); s != "8Gi" {
			return fmt.Errorf("claim requests %s", s)
		}
		return nil
	})

	patchCR(t, ns, "disk", func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage.Size = ptr.To(resource.MustParse("2Gi"))
	})
	env.Eventually(t, "ShrinkRefused", func() error {
		cr := &llamav1alpha1.LlamaStackDistribution{}
		if err := env.Get(ns, "disk", cr); err != nil {
			return err
		}
		c := condition(cr, status.TypeStorageReady)
		if cr.Status.ObservedGeneration != cr.Generation || c == nil || c.Reason != "ShrinkRefused" {
			return fmt.Errorf("StorageReady %+v", c)
		}
		if !assert.Contains(t, c.Message, "set 8Gi or more") {
			return nil
		}
		return nil
	})
	assert.Equal(t, "8Gi", claimSize(t, ns, "disk-pvc"), "the claim is never shrunk")
	got = &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "disk", got))
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReconciled).Status, "the rest of the spec still applies")

	patchCR(t, ns, "disk", func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.Storage = nil })
	env.Eventually(t, "the Deployment to use an emptyDir", func() error {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, "disk", dep); err != nil {
			return err
		}
		if dep.Spec.Template.Spec.Volumes[0].EmptyDir == nil {
			return fmt.Errorf("volume %+v", dep.Spec.Template.Spec.Volumes[0])
		}
		return nil
	})
	pvc = &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "disk-pvc", pvc), "dropping storage from the spec must not delete the data")
	assert.Nil(t, pvc.DeletionTimestamp)
}

func TestOperatorSettingsOverrideImages(t *testing.T) {
	ns := env.NewNamespace(t, "")
	t.Setenv("RELATED_IMAGE_TGI", "mirror.example.com/tgi@sha256:0123")
	cr := framework.LLSD(ns, "img")
	cr.Spec.Server.Distribution.Name = "tgi"
	require.NoError(t, k8s.Create(context.Background(), cr))
	image := func() string {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, "img", dep); err != nil {
			return err.Error()
		}
		return dep.Spec.Template.Spec.Containers[0].Image
	}
	env.Eventually(t, "the RELATED_IMAGE_ image", func() error {
		if img := image(); img != "mirror.example.com/tgi@sha256:0123" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap},
		Data:       map[string]string{"image-overrides": "tgi: admin.example.com/tgi:pinned\n"},
	}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	env.Eventually(t, "the settings ConfigMap's image", func() error {
		if img := image(); img != "admin.example.com/tgi:pinned" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
	env.Eventually(t, "status to list the overridden image", func() error {
		got := &llamav1alpha1.LlamaStackDistribution{}
		if err := env.Get(ns, "img", got); err != nil {
			return err
		}
		if img := got.Status.DistributionConfig.AvailableDistributions["tgi"]; img != "admin.example.com/tgi:pinned" {
			return fmt.Errorf("status lists %s", img)
		}
		return nil
	})

	// A broken settings ConfigMap is reported on the CR; nothing running changes.
	cm.Data = map[string]string{"network-policy": "sometimes"}
	require.NoError(t, k8s.Update(context.Background(), cm))
	failed := env.WaitLLSD(t, ns, "img", llamav1alpha1.PhaseFailed)
	c := condition(failed, status.TypeReconciled)
	assert.Equal(t, "InvalidOperatorSettings", c.Reason)
	assert.Contains(t, c.Message, "network-policy")
	assert.Equal(t, "admin.example.com/tgi:pinned", image())

	require.NoError(t, k8s.Delete(context.Background(), cm))
	env.WaitLLSD(t, ns, "img", llamav1alpha1.PhaseInitializing)
}

func TestNetworkPolicyCanBeTurnedOff(t *testing.T) {
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "np")))
	env.WaitLLSD(t, ns, "np", llamav1alpha1.PhaseInitializing)
	require.NoError(t, env.Get(ns, "np-network-policy", &networkingv1.NetworkPolicy{}))

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap},
		Data:       map[string]string{"network-policy": "disabled"},
	}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	env.Eventually(t, "the NetworkPolicy to go", func() error { return env.Gone(ns, "np-network-policy", &networkingv1.NetworkPolicy{}) })
}

// No NetworkPolicy by default, as upstream: upstream's ConfigMap
// llama-stack-operator-config turns it on (featureFlags, watched: a change
// reconciles every CR), and this operator's own key wins over it.
func TestNetworkPolicyFollowsUpstreamFeatureFlags(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(ctx, framework.LLSD(ns, "flags")))
	env.WaitLLSD(t, ns, "flags", llamav1alpha1.PhaseInitializing)
	require.NoError(t, env.Get(ns, "flags-network-policy", &networkingv1.NetworkPolicy{}), "the suite's upstream ConfigMap turns it on")
	t.Cleanup(func() {
		_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: upstreamLlamaConfigMap}})
		_ = k8s.Create(ctx, upstreamLlamaConfig(true))
	})

	upstream := &corev1.ConfigMap{}
	require.NoError(t, env.Get(operatorNamespace, upstreamLlamaConfigMap, upstream))
	require.NoError(t, k8s.Delete(ctx, upstream))
	env.Eventually(t, "no NetworkPolicy without any setting (upstream's default)", func() error {
		return env.Gone(ns, "flags-network-policy", &networkingv1.NetworkPolicy{})
	})

	require.NoError(t, k8s.Create(ctx, upstreamLlamaConfig(true)))
	env.Eventually(t, "the NetworkPolicy upstream's featureFlags turn on", func() error {
		return env.Get(ns, "flags-network-policy", &networkingv1.NetworkPolicy{})
	})

	ours := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap},
		Data:       map[string]string{"network-policy": "disabled"},
	}
	require.NoError(t, k8s.Create(ctx, ours))
	t.Cleanup(func() { _ = k8s.Delete(ctx, ours) })
	env.Eventually(t, "this operator's key to win over upstream's", func() error {
		return env.Gone(ns, "flags-network-policy", &networkingv1.NetworkPolicy{})
	})
}

func TestStatusReportsServiceAndRoute(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "url")
	cr.Spec.Network = &llamav1alpha1.NetworkSpec{ExposeRoute: true}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := env.WaitLLSD(t, ns, "url", llamav1alpha1.PhaseInitializing)
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeServiceReady).Status)
	assert.Equal(t, "NoStorageRequested", condition(got, status.TypeStorageReady).Reason)
	assert.Empty(t, got.Status.RouteURL, "no host is known yet")

	// Play the ingress controller.
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "url-ingress"}}
	env.UpdateStatus(t, ing, func() {
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "llama.example.com"}}
	})
	env.Eventually(t, "routeURL", func() error {
		if err := env.Get(ns, "url", got); err != nil {
			return err
		}
		if got.Status.RouteURL != "http://llama.example.com" {
			return fmt.Errorf("routeURL %q", got.Status.RouteURL)
		}
		return nil
	})
}

func TestAPIRejectsBadInput(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	tests := map[string]struct {
		mut  func(*llamav1alpha1.LlamaStackDistribution)
		want string
	}{
		"userConfig and config": {func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "x"}
			c.Spec.Server.Config = &llamav1alpha1.ServerConfig{}
		}, "set at most one of spec.server.userConfig"},
		"zero workers": {func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.Workers = ptr.To(int32(0)) }, "spec.server.workers"},
		"min over max": {func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MinReplicas: ptr.To(int32(5)), MaxReplicas: 2}
		}, "minReplicas must not exceed maxReplicas"},
		"both PDB fields": {func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.PodDisruptionBudget = &llamav1alpha1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
		}, "set at most one of spec.server.podDisruptionBudget"},
		"port out of range": {func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.ContainerSpec.Port = 70000 }, "spec.server.containerSpec.port"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cr := framework.LLSD(ns, "bad")
			tt.mut(cr)
			err := k8s.Create(context.Background(), cr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAPIRejectsInvalidQuantity(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	u := map[string]any{
		"apiVersion": "llamastack.io/v1alpha1", "kind": "LlamaStackDistribution",
		"metadata": map[string]any{"name": "q", "namespace": ns},
		"spec": map[string]any{"server": map[string]any{
			"distribution": map[string]any{"name": "starter"},
			"storage":      map[string]any{"size": "ten gigs"},
		}},
	}
	obj := &unstructuredObj{}
	obj.Object = u
	err := k8s.Create(context.Background(), obj)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.server.storage.size")
}
