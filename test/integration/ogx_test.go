package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/convert"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

func ogxCondition(cr *ogxv1beta1.OGXServer, t string) *metav1.Condition {
	return meta.FindStatusCondition(cr.Status.Conditions, t)
}

// An OGXServer with a generated configuration becomes upstream's objects:
// the Deployment (labels, selector, env, mounts), the Service, the claim,
// the NetworkPolicy and the configuration in an immutable ConfigMap named
// after its content, with the Secret's value only by reference.
func TestOGXServerGeneratedConfiguration(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.OGX(ns, "gen")
	size := resource.MustParse("2Gi")
	cr.Spec.Workload = &ogxv1beta1.WorkloadSpec{Storage: &ogxv1beta1.PVCStorageSpec{Size: &size}}
	cr.Spec.Providers = &ogxv1beta1.ProvidersSpec{Inference: &ogxv1beta1.InferenceProvidersSpec{Remote: &ogxv1beta1.InferenceRemoteProviders{
		OpenAI: []ogxv1beta1.OpenAIProvider{{RoutedProviderBase: ogxv1beta1.RoutedProviderBase{ID: "openai-primary"}, APIKey: ogxv1beta1.SecretKeyRef{Name: "openai-creds", Key: "api-key"}}},
	}}}
	cr.Spec.Resources = &ogxv1beta1.ResourcesSpec{Models: []ogxv1beta1.ModelConfig{{Name: "gpt-4o-mini", Provider: "openai-primary", ModelType: "llm"}}}
	cr.Spec.DisabledAPIs = []string{"vector_io"}
	require.NoError(t, k8s.Create(context.Background(), cr))

	got := env.WaitOGX(t, ns, "gen", ogxv1beta1.OGXServerPhaseInitializing)
	assert.Contains(t, got.Finalizers, release.Finalizer)
	assert.Equal(t, "http://gen-service."+ns+".svc.cluster.local:8321", got.Status.ServiceURL)
	c := ogxCondition(got, ogxv1beta1.ConditionTypeConfigGenerated)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status, c.Message)
	require.NotNil(t, got.Status.ConfigGeneration)
	name := got.Status.ConfigGeneration.ConfigMapName
	assert.True(t, strings.HasPrefix(name, "gen-config-"), name)
	assert.Equal(t, 1, got.Status.ConfigGeneration.ResourceCount)
	require.NotNil(t, got.Status.ResolvedDistribution)
	assert.Equal(t, "docker.io/ogxai/distribution-starter:latest", got.Status.ResolvedDistribution.Image)

	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, name, cm))
	assert.True(t, ptr.Deref(cm.Immutable, false))
	assert.Contains(t, cm.Data["config.yaml"], "${env.OGX_OPENAI_PRIMARY_API_KEY}")
	assert.Equal(t, "true", cm.Labels["ogx.io/generated-config"])

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "gen", dep))
	assert.Equal(t, map[string]string{"app": "ogx", "app.kubernetes.io/instance": "gen"}, dep.Spec.Selector.MatchLabels)
	pod := dep.Spec.Template.Spec
	assert.Equal(t, "gen-sa", pod.ServiceAccountName)
	ctr := pod.Containers[0]
	assert.Equal(t, "ogx", ctr.Name)
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "OGX_CONFIG", Value: "/etc/ogx/config.yaml"})
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "OGX_PORT", Value: "8321"})
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "HF_HOME", Value: "/.ogx"})
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "OGX_OPENAI_PRIMARY_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "openai-creds"}, Key: "api-key"}}})
	assert.Equal(t, name, dep.Spec.Template.Annotations["configmap.hash/user-config"])
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, dep.Spec.Strategy.Type)
	require.Len(t, dep.OwnerReferences, 1)
	assert.Equal(t, "OGXServer", dep.OwnerReferences[0].Kind)

	svc := &corev1.Service{}
	require.NoError(t, env.Get(ns, "gen-service", svc))
	assert.Equal(t, map[string]string{"app": "ogx", "app.kubernetes.io/instance": "gen"}, svc.Spec.Selector)
	require.NoError(t, env.Get(ns, "gen-pvc", &corev1.PersistentVolumeClaim{}))
	require.NoError(t, env.Get(ns, "gen-network-policy", &networkingv1.NetworkPolicy{}))

	// A new model: a new ConfigMap, and the pods roll to it.
	env.Update(t, got, func() { got.Spec.Resources.Models[0].Name = "gpt-4o" })
	env.Eventually(t, "a new generated ConfigMap", func() error {
		if err := env.Get(ns, "gen", got); err != nil {
			return err
		}
		if got.Status.ConfigGeneration == nil || got.Status.ConfigGeneration.ConfigMapName == name {
			return fmt.Errorf("not yet")
		}
		return env.Get(ns, "gen", dep)
	})
	assert.Equal(t, got.Status.ConfigGeneration.ConfigMapName, dep.Spec.Template.Annotations["configmap.hash/user-config"])

	// A model naming no provider of the CR: the condition names the field,
	// and what runs stays.
	before := dep.Spec.Template.Annotations["configmap.hash/user-config"]
	env.Update(t, got, func() { got.Spec.Resources.Models[0].Provider = "nope" })
	failed := env.WaitOGX(t, ns, "gen", ogxv1beta1.OGXServerPhaseFailed)
	c = ogxCondition(failed, ogxv1beta1.ConditionTypeConfigGenerated)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, c.Message, "spec.resources.models[0].provider")
	assert.Contains(t, ogxCondition(failed, status.TypeReconciled).Message, "spec.resources.models[0].provider")
	require.NoError(t, env.Get(ns, "gen", dep))
	assert.Equal(t, before, dep.Spec.Template.Annotations["configmap.hash/user-config"], "nothing running is touched")

	require.NoError(t, k8s.Delete(context.Background(), failed))
	env.Eventually(t, "the Deployment goes with the CR", env.GoneFrom(dep))
	require.NoError(t, env.Get(ns, "gen-pvc", &corev1.PersistentVolumeClaim{}), "the claim outlives the CR, as upstream's")
}

// overrideConfig's ConfigMap: missing, the condition names the field; once
// created the server starts on it; a content change rolls the pods, a
// label change does not.
func TestOGXServerOverrideConfig(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.OGX(ns, "ovr")
	cr.Spec.OverrideConfig = &ogxv1beta1.ConfigMapKeyRef{Name: "my-config", Key: "run.yaml"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	failed := env.WaitOGX(t, ns, "ovr", ogxv1beta1.OGXServerPhaseFailed)
	assert.Contains(t, ogxCondition(failed, status.TypeReconciled).Message, "spec.overrideConfig.name")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-config"}, Data: map[string]string{"run.yaml": "version: 2\n"}}
	require.NoError(t, k8s.Create(context.Background(), cm))
	env.WaitOGX(t, ns, "ovr", ogxv1beta1.OGXServerPhaseInitializing)
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "ovr", dep))
	first := dep.Spec.Template.Annotations["configmap.hash/user-config"]
	require.NotEmpty(t, first)
	var mounted bool
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == "my-config" && v.ConfigMap.Items[0].Key == "run.yaml" && v.ConfigMap.Items[0].Path == "config.yaml" {
			mounted = true
		}
	}
	assert.True(t, mounted, "the key is mounted as /etc/ogx/config.yaml")

	env.Update(t, cm, func() { cm.Data["run.yaml"] = "version: 2\napis: [inference]\n" })
	env.Eventually(t, "the pods roll to the new content", func() error {
		if err := env.Get(ns, "ovr", dep); err != nil {
			return err
		}
		if dep.Spec.Template.Annotations["configmap.hash/user-config"] == first {
			return fmt.Errorf("not yet")
		}
		return nil
	})
}

// The carry-over from a LlamaStackDistribution: its conversion, applied
// beside it, takes its claim over (the same claim, never a second one) and,
// once the old CR is deleted, starts on it and serves the old Service name.
// A claim upstream's operator left (controlled by the old CR) loses that
// controller at once, so that deleting the old CR keeps the data.
func TestOGXServerCarriesOverALlamaStackDistribution(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	old := framework.LLSD(ns, "old")
	size := resource.MustParse("3Gi")
	old.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &size}
	require.NoError(t, k8s.Create(context.Background(), old))
	env.WaitLLSD(t, ns, "old", llamav1alpha1.PhaseInitializing)
	claim := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "old-pvc", claim))
	require.NoError(t, env.Get(ns, "old-service", &corev1.Service{}))

	cr, _ := convert.Convert(old, convert.Options{})
	cr.ResourceVersion = ""
	require.NoError(t, k8s.Create(context.Background(), cr))
	env.Eventually(t, "the new server waits for the old one", func() error {
		got := &ogxv1beta1.OGXServer{}
		if err := env.Get(ns, "old-ogx", got); err != nil {
			return err
		}
		if c := ogxCondition(got, ogxv1beta1.ConditionTypeStorageAdopted); c == nil || c.Reason != ogx.ReasonAdoptionWaiting || !strings.Contains(c.Message, "delete it") {
			p := &corev1.PersistentVolumeClaim{}
			_ = env.Get(ns, "old-pvc", p)
			return fmt.Errorf("StorageAdopted %+v; conditions %+v; claim labels %v", c, got.Status.Conditions, p.Labels)
		}
		return nil
	})
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "old-ogx", dep))
	assert.Equal(t, int32(0), *dep.Spec.Replicas, "no second pod on a ReadWriteOnce claim")
	assert.Equal(t, "old-pvc", dep.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	assert.Error(t, env.Get(ns, "old-ogx-pvc", &corev1.PersistentVolumeClaim{}), "no second claim")

	require.NoError(t, k8s.Delete(context.Background(), old))
	env.Eventually(t, "the old server goes", env.GoneFrom(old))
	got := env.WaitOGX(t, ns, "old-ogx", ogxv1beta1.OGXServerPhaseInitializing)
	env.Eventually(t, "the new server starts on the claim and serves the old name", func() error {
		if err := env.Get(ns, "old-ogx", got); err != nil {
			return err
		}
		if c := ogxCondition(got, ogxv1beta1.ConditionTypeStorageAdopted); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("StorageAdopted %+v", c)
		}
		if c := ogxCondition(got, ogxv1beta1.ConditionTypeNetworkingAdopted); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("NetworkingAdopted %+v", c)
		}
		return env.Get(ns, "old-ogx", dep)
	})
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	assert.Equal(t, "/.llama", dep.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath)
	after := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "old-pvc", after))
	assert.Equal(t, claim.UID, after.UID, "the same claim, with its data")
	assert.Equal(t, "old", after.Labels[ogxv1beta1.AdoptedFromLabel])
	assert.Equal(t, "old-ogx", after.Labels["app.kubernetes.io/instance"])
	assert.NotEmpty(t, after.Annotations[ogxv1beta1.AdoptedAtAnnotation])
	svc := &corev1.Service{}
	require.NoError(t, env.Get(ns, "old-service", svc))
	assert.Equal(t, map[string]string{"app": "ogx", "app.kubernetes.io/instance": "old-ogx"}, svc.Spec.Selector, "clients of the old name reach the new pods")
	assert.Error(t, env.Get(ns, "old-ogx-pvc", &corev1.PersistentVolumeClaim{}), "still no second claim")

	// A claim upstream's operator made: controlled by the (gone) old CR.
	up := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "up-pvc", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "llamastack.io/v1alpha1", Kind: "LlamaStackDistribution", Name: "up", UID: "0c2b1f6e-0000-4000-8000-000000000001", Controller: ptr.To(true),
		}}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}}},
	}
	require.NoError(t, k8s.Create(context.Background(), up))
	next := framework.OGX(ns, "next")
	next.Annotations = map[string]string{ogxv1beta1.AdoptStorageAnnotation: "up"}
	require.NoError(t, k8s.Create(context.Background(), next))
	env.Eventually(t, "upstream's claim is adopted", func() error {
		if err := env.Get(ns, "up-pvc", up); err != nil {
			return err
		}
		if len(up.OwnerReferences) != 0 || up.Labels["app.kubernetes.io/instance"] != "next" {
			return fmt.Errorf("owners %v, labels %v", up.OwnerReferences, up.Labels)
		}
		return nil
	})

	// A value that names the server itself is refused, and nothing is adopted.
	self := framework.OGX(ns, "self")
	self.Annotations = map[string]string{ogxv1beta1.AdoptStorageAnnotation: "self"}
	require.NoError(t, k8s.Create(context.Background(), self))
	env.Eventually(t, "AdoptionConfigInvalid", func() error {
		if err := env.Get(ns, "self", self); err != nil {
			return err
		}
		if c := ogxCondition(self, ogxv1beta1.ConditionTypeAdoptionConfigInvalid); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "own name") {
			return fmt.Errorf("AdoptionConfigInvalid %+v", c)
		}
		return nil
	})
}

// ogx.io/adopt-storage takes only the old server's claim: a running
// OGXServer's own <name>-pvc (named like an old server's claim) and a
// hand-made <x>-pvc are refused and left as they are; and a claim the
// old server's provenance allows is never mounted while a pod that is not
// this server's mounts it. (Second security review, finding 5: OGXServer
// thief annotated adopt-storage: victim relabelled and mounted the running
// victim's claim.)
func TestAdoptStorageTakesOnlyTheOldServersClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.NewNamespace(t, "")
	victim := framework.OGX(ns, "victim")
	victim.Spec.Workload = &ogxv1beta1.WorkloadSpec{Storage: &ogxv1beta1.PVCStorageSpec{}}
	require.NoError(t, k8s.Create(ctx, victim))
	env.WaitOGX(t, ns, "victim", ogxv1beta1.OGXServerPhaseInitializing)
	claim := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "victim-pvc", claim))

	refused := func(name, source, want string) {
		t.Helper()
		cr := framework.OGX(ns, name)
		cr.Annotations = map[string]string{ogxv1beta1.AdoptStorageAnnotation: source}
		require.NoError(t, k8s.Create(ctx, cr))
		env.Eventually(t, name+": AdoptionConfigInvalid", func() error {
			if err := env.Get(ns, name, cr); err != nil {
				return err
			}
			if c := ogxCondition(cr, ogxv1beta1.ConditionTypeAdoptionConfigInvalid); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, want) {
				return fmt.Errorf("AdoptionConfigInvalid %+v", c)
			}
			return nil
		})
		dep := &appsv1.Deployment{}
		env.Eventually(t, name+"'s Deployment", func() error { return env.Get(ns, name, dep) })
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				assert.NotEqual(t, source+"-pvc", v.PersistentVolumeClaim.ClaimName, "%s mounts the claim it was refused", name)
			}
		}
	}
	refused("thief", "victim", "claim victim-pvc is OGXServer.ogx.io "+ns+"/victim's")
	after := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "victim-pvc", after))
	assert.Equal(t, claim.ResourceVersion, after.ResourceVersion, "the victim's claim untouched")

	hand := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hand-pvc"},
		Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	require.NoError(t, k8s.Create(ctx, hand))
	refused("taker", "hand", "claim hand-pvc carries no mark of the old server hand")
	require.NoError(t, env.Get(ns, "hand-pvc", after))
	assert.Empty(t, after.Annotations[ogx.AnnotationAdoptedBy])
	assert.Empty(t, after.Labels[ogxv1beta1.AdoptedFromLabel])

	// Upstream's claim of a gone LlamaStackDistribution, still mounted by a
	// pod that is not the new server's: the new server waits at zero.
	up := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "up-pvc", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "llamastack.io/v1alpha1", Kind: "LlamaStackDistribution", Name: "up", UID: "0c2b1f6e-0000-4000-8000-000000000002", Controller: ptr.To(true),
		}}},
		Spec: hand.Spec,
	}
	require.NoError(t, k8s.Create(ctx, up))
	holder := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "up-server"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "s", Image: "x"}}, Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "up-pvc"}}}}},
	}
	require.NoError(t, k8s.Create(ctx, holder))
	next := framework.OGX(ns, "next")
	next.Annotations = map[string]string{ogxv1beta1.AdoptStorageAnnotation: "up"}
	require.NoError(t, k8s.Create(ctx, next))
	dep := &appsv1.Deployment{}
	env.Eventually(t, "the new server waits while another pod mounts the claim", func() error {
		if err := env.Get(ns, "next", next); err != nil {
			return err
		}
		if c := ogxCondition(next, ogxv1beta1.ConditionTypeStorageAdopted); c == nil || c.Reason != ogx.ReasonAdoptionWaiting || !strings.Contains(c.Message, "pod up-server") {
			return fmt.Errorf("StorageAdopted %+v", c)
		}
		return env.Get(ns, "next", dep)
	})
	assert.Equal(t, int32(0), *dep.Spec.Replicas, "never two servers on one claim")
	require.NoError(t, k8s.Delete(ctx, holder, client.GracePeriodSeconds(0)))
	env.Eventually(t, "the new server starts on the claim once no other pod mounts it", func() error {
		if err := env.Get(ns, "next", dep); err != nil {
			return err
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
			return fmt.Errorf("replicas %v", dep.Spec.Replicas)
		}
		return nil
	})
}
