package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

const nemoConfigHash = "trustyai.opendatahub.io/nemo-config-hash"

// waitNemo waits for the condition at the CR's generation.
func waitNemo(t *testing.T, ns, name, typ string, st metav1.ConditionStatus, reason string) *nemov1alpha1.NemoGuardrails {
	t.Helper()
	cr := &nemov1alpha1.NemoGuardrails{}
	env.Eventually(t, fmt.Sprintf("%s %s=%s %s", name, typ, st, reason), func() error {
		if err := env.Get(ns, name, cr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cr.Status.Conditions, typ)
		if c == nil || c.Status != st || c.Reason != reason || c.ObservedGeneration != cr.Generation {
			return fmt.Errorf("conditions %+v", cr.Status.Conditions)
		}
		return nil
	})
	return cr
}

// upstreamNemo is the NemoGuardrails of upstream's controller test (its
// config/samples file is of a kind upstream's CRD does not serve,
// NemoGuardrail, with an empty spec), with its ConfigMap.
func upstreamNemo(t *testing.T, ns string) *nemov1alpha1.NemoGuardrails {
	t.Helper()
	require.NoError(t, k8s.Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nemo-config"},
		Data:       map[string]string{"actions.py": "# dummy actions", "config.yaml": "dummy: config"},
	}))
	return &nemov1alpha1.NemoGuardrails{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-nemoguardrails", Annotations: map[string]string{nemov1alpha1.AuthAnnotation: "true"}},
		Spec: nemov1alpha1.NemoGuardrailsSpec{
			NemoConfigs: []nemov1alpha1.NemoConfig{{Name: "nemo-config", ConfigMaps: []string{"nemo-config"}, Default: true}},
			Env:         []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "DEBUG"}},
		},
	}
}

// Upstream's objects by upstream's names, Ready once the pods are; a
// ConfigMap edit rolls the pods, an unchanged reconcile does not; auth off
// takes the proxy, its ServiceAccount and binding away; delete removes the
// binding (cluster-scoped, outside the release).
func TestNemoGuardrailsLifecycle(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := upstreamNemo(t, ns)
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitNemo(t, ns, cr.Name, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	assert.Contains(t, got.Finalizers, release.Finalizer)
	assert.Equal(t, int32(1), *got.Spec.Replicas, "the CRD's default")

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, cr.Name, dep))
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	assert.Equal(t, "test-nemoguardrails-serviceaccount", dep.Spec.Template.Spec.ServiceAccountName)
	main := dep.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "nemo-guardrails", main.Name)
	assert.Equal(t, []corev1.EnvVar{{Name: "CONFIG_ID", Value: "nemo-config"}, {Name: "LOG_LEVEL", Value: "DEBUG"}}, main.Env)
	assert.Equal(t, "/app/config/nemo-config", main.VolumeMounts[0].MountPath)
	assert.Equal(t, "kube-rbac-proxy", dep.Spec.Template.Spec.Containers[1].Name)
	hash := dep.Spec.Template.Annotations[nemoConfigHash]
	assert.NotEmpty(t, hash)
	svc := &corev1.Service{}
	require.NoError(t, env.Get(ns, cr.Name, svc))
	assert.Equal(t, int32(443), svc.Spec.Ports[0].Port)
	for _, name := range []string{"test-nemoguardrails-ca-bundle", "test-nemoguardrails-rbac-proxy-config"} {
		assert.NoError(t, env.Get(ns, name, &corev1.ConfigMap{}), name)
	}
	require.NoError(t, env.Get(ns, "test-nemoguardrails-serviceaccount", &corev1.ServiceAccount{}))
	binding := &rbacv1.ClusterRoleBinding{}
	require.NoError(t, env.Get("", "nemoguardrails-proxy."+ns+".test-nemoguardrails", binding))
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "test-nemoguardrails-serviceaccount"}}, binding.Subjects)
	assert.Equal(t, "ai-stack-operator-trustyai-proxy", binding.RoleRef.Name)
	require.NotNil(t, got.Status.CA)
	assert.False(t, got.Status.CA.ODHTrustedCAFound)

	markReady(t, ns, cr.Name, 1)
	ready := waitNemo(t, ns, cr.Name, status.TypeReady, metav1.ConditionTrue, "AllComponentsReady")
	assert.NotContains(t, env.EventReasons(t, ns, cr.Name), "DriftRepaired", "what the chart renders is what the API server stores: nothing to repair")
	assert.Equal(t, "Ready", ready.Status.Phase)
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(ready.Status.Conditions, "ReconcileComplete").Status)
	assert.Nil(t, meta.FindStatusCondition(ready.Status.Conditions, "RouteReady"), "no Route API, no Ingress domain: nothing to wait for")

	// The configuration's content changes: the pods roll.
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, "nemo-config", cm))
	cm.Data["config.yaml"] = "dummy: changed"
	require.NoError(t, k8s.Update(context.Background(), cm))
	env.Eventually(t, "a new configuration hash", func() error {
		if err := env.Get(ns, cr.Name, dep); err != nil {
			return err
		}
		if dep.Spec.Template.Annotations[nemoConfigHash] == hash {
			return fmt.Errorf("hash unchanged")
		}
		return nil
	})

	// Auth off: the proxy, its ConfigMap, ServiceAccount and binding go.
	env.Update(t, got, func() { delete(got.Annotations, nemov1alpha1.AuthAnnotation) })
	env.Eventually(t, "the binding goes with auth", env.GoneFrom(binding))
	require.NoError(t, env.Get(ns, cr.Name, dep))
	assert.Len(t, dep.Spec.Template.Spec.Containers, 1)
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "test-nemoguardrails-serviceaccount", &corev1.ServiceAccount{})))

	// Auth on again, then delete: everything goes.
	env.Update(t, got, func() { got.SetAnnotations(map[string]string{nemov1alpha1.AuthAnnotation: "TRUE"}) })
	env.Eventually(t, "the binding is back", func() error { return env.Get("", binding.Name, &rbacv1.ClusterRoleBinding{}) })
	require.NoError(t, k8s.Delete(context.Background(), got))
	env.Eventually(t, "the Deployment goes with the CR", env.GoneFrom(dep))
	env.Eventually(t, "the binding goes with the CR", env.GoneFrom(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name}}))
}

// A missing ConfigMap, two configurations in one directory, and a CA
// ConfigMap of another namespace each name the field to fix; what runs
// stays.
func TestNemoGuardrailsBadInput(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := upstreamNemo(t, ns)
	cr.Name = "bad"
	cr.Spec.NemoConfigs[0].ConfigMaps = []string{"nemo-config", "missing"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitNemo(t, ns, "bad", status.TypeReconciled, metav1.ConditionFalse, "ConfigMapNotFound")
	assert.Contains(t, meta.FindStatusCondition(got.Status.Conditions, status.TypeReconciled).Message, "spec.nemoConfigs[0].configMaps[1]")
	assert.Equal(t, "Error", got.Status.Phase)
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "bad", &appsv1.Deployment{})), "nothing applied")

	env.Update(t, got, func() { got.Spec.NemoConfigs[0].ConfigMaps = []string{"nemo-config"} })
	got = waitNemo(t, ns, "bad", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "bad", dep))
	before := dep.Spec.Template.Annotations[nemoConfigHash]

	env.Update(t, got, func() {
		got.Spec.NemoConfigs = append(got.Spec.NemoConfigs, nemov1alpha1.NemoConfig{Name: "nemo-config", ConfigMaps: []string{"nemo-config"}})
	})
	got = waitNemo(t, ns, "bad", status.TypeReconciled, metav1.ConditionFalse, status.ReasonInvalidSpec)
	assert.Contains(t, meta.FindStatusCondition(got.Status.Conditions, status.TypeReconciled).Message, "spec.nemoConfigs[1].name")
	require.NoError(t, env.Get(ns, "bad", dep))
	assert.Equal(t, before, dep.Spec.Template.Annotations[nemoConfigHash], "nothing running is touched")

	env.Update(t, got, func() {
		got.Spec.NemoConfigs = got.Spec.NemoConfigs[:1]
		got.Spec.CABundleConfig = &nemov1alpha1.CABundleConfig{ConfigMapName: "ca", ConfigMapNamespace: "kube-public"}
	})
	got = waitNemo(t, ns, "bad", status.TypeTrustReady, metav1.ConditionFalse, "CrossNamespaceRefused")
	assert.Contains(t, meta.FindStatusCondition(got.Status.Conditions, status.TypeTrustReady).Message, "spec.caBundleConfig.configMapNamespace")
	assert.False(t, got.Status.CA.UserCAFound)
	assert.NotEmpty(t, got.Status.CA.UserCAError)
}
