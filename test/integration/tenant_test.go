package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// waitCondition waits for a condition of the CR's current generation to have
// the status and reason, and returns the CR.
func waitCondition(t *testing.T, ns, name, typ string, st metav1.ConditionStatus, reason string) *llamav1alpha1.LlamaStackDistribution {
	t.Helper()
	cr := &llamav1alpha1.LlamaStackDistribution{}
	env.Eventually(t, fmt.Sprintf("%s/%s %s=%s (%s)", ns, name, typ, st, reason), func() error {
		if err := env.Get(ns, name, cr); err != nil {
			return err
		}
		c := condition(cr, typ)
		if c == nil || c.ObservedGeneration != cr.Generation || c.Status != st || c.Reason != reason {
			return fmt.Errorf("conditions %+v", cr.Status.Conditions)
		}
		return nil
	})
	return cr
}

// never fails the test if cond returns nil at any poll within d.
func never(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(); err == nil {
			t.Fatalf("%s happened", what)
		}
		time.Sleep(framework.Tick)
	}
}

// The reproduction from the review: a string field with a second YAML
// document made main's operator create a NetworkPolicy in another namespace.
func TestInjectedDocumentNeverLeavesTheNamespace(t *testing.T) {
	t.Parallel()
	nsA, nsB := env.NewNamespace(t, ""), env.NewNamespace(t, "")
	payload := "1\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny-all\n  namespace: " + nsB + "\nspec:\n  podSelector: {}\n"
	u := &unstructuredObj{Object: map[string]any{
		"apiVersion": "llamastack.io/v1alpha1", "kind": "LlamaStackDistribution",
		"metadata": map[string]any{"name": "evil", "namespace": nsA},
		"spec": map[string]any{"server": map[string]any{
			"distribution":        map[string]any{"name": "starter"},
			"podDisruptionBudget": map[string]any{"minAvailable": payload},
		}},
	}}
	require.NoError(t, k8s.Create(context.Background(), u), "an int-or-string field takes any string: the API server accepts it")

	cr := waitCondition(t, nsA, "evil", status.TypeReconciled, metav1.ConditionFalse, "InvalidSpec")
	assert.Contains(t, condition(cr, status.TypeReconciled).Message, "spec.server.podDisruptionBudget.minAvailable")
	never(t, 2*time.Second, "a NetworkPolicy in the other namespace", func() error {
		return env.Get(nsB, "deny-all", &networkingv1.NetworkPolicy{})
	})
	list := &networkingv1.NetworkPolicyList{}
	require.NoError(t, k8s.List(context.Background(), list, client.InNamespace(nsB)))
	assert.Empty(t, list.Items)
	assert.True(t, apierrors.IsNotFound(env.Get(nsA, "evil", &appsv1.Deployment{})), "nothing of a refused spec is applied")
}

// A release stored by an older operator (or tampered with) that holds an
// object outside the CR's namespace is never re-applied by drift repair.
func TestStoredReleaseIsGuardedBeforeDriftRepair(t *testing.T) {
	t.Parallel()
	nsA, nsB := env.NewNamespace(t, ""), env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(nsA, "stored")))
	waitCondition(t, nsA, "stored", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")

	// Append an object in namespace B to the deployed release, as main's
	// operator stored it for an injected CR.
	releases := framework.NewRecords(clientset, operatorNamespace)
	rel, err := releases.Deployed(naming.ReleaseName("llsd", nsA, "stored"))
	require.NoError(t, err)
	rel.Manifest += "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny-all\n  namespace: " + nsB + "\nspec:\n  podSelector: {}\n"
	require.NoError(t, releases.Update(rel))
	// Drift repair runs on every reconcile (the suite's period is short).
	cr := waitCondition(t, nsA, "stored", status.TypeReconciled, metav1.ConditionFalse, "InvalidSpec")
	assert.Contains(t, condition(cr, status.TypeReconciled).Message, "NetworkPolicy "+nsB+"/deny-all")
	// Drift that would be repaired otherwise stays, too.
	require.NoError(t, k8s.Delete(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "stored-service"}}))
	never(t, 2*time.Second, "the stored NetworkPolicy re-created in the other namespace", func() error {
		return env.Get(nsB, "deny-all", &networkingv1.NetworkPolicy{})
	})
	assert.True(t, apierrors.IsNotFound(env.Get(nsA, "stored-service", &corev1.Service{})), "nothing of a refused manifest is repaired")

	// Deleting the CR removes its objects, but nothing outside its namespace.
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "deny-all"}}
	require.NoError(t, k8s.Create(context.Background(), np))
	require.NoError(t, k8s.Delete(context.Background(), framework.LLSD(nsA, "stored")))
	env.Eventually(t, "CR deleted", func() error { return env.Gone(nsA, "stored", &llamav1alpha1.LlamaStackDistribution{}) })
	require.NoError(t, env.Get(nsB, "deny-all", &networkingv1.NetworkPolicy{}), "uninstall never deletes outside the CR's namespace")
	env.Eventually(t, "Deployment deleted", func() error { return env.Gone(nsA, "stored", &appsv1.Deployment{}) })
}

// userConfigMap creates a ConfigMap the way a user would: no operator label,
// no owner.
func userConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "a"}},
		Data:       map[string]string{"ca-bundle.crt": "mine", "config.yaml": "also mine"},
	}
	require.NoError(t, k8s.Create(context.Background(), cm))
	return cm
}

// sameConfigMap fails unless the ConfigMap is exactly as created.
func sameConfigMap(t *testing.T, want *corev1.ConfigMap) {
	t.Helper()
	got := &corev1.ConfigMap{}
	require.NoError(t, env.Get(want.Namespace, want.Name, got), "the user's ConfigMap %s must survive", want.Name)
	assert.Equal(t, want.ResourceVersion, got.ResourceVersion, "%s was written", want.Name)
	assert.Equal(t, want.Data, got.Data)
	assert.Equal(t, want.Labels, got.Labels)
	assert.Empty(t, got.OwnerReferences)
}

// A user's ConfigMaps that carry the names of the operator's (the merged CA
// bundle written by Go, the typed run configuration rendered by the chart)
// survive create, update and delete of the CR byte for byte.
func TestUserObjectsOfOurNamesSurvive(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	caSource := userConfigMap(t, ns, "corp-ca")
	_ = caSource
	bundle := userConfigMap(t, ns, "clash-ca-bundle")
	runConfig := userConfigMap(t, ns, "clash-config")

	cr := framework.LLSD(ns, "clash")
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "corp-ca"}}
	cr.Spec.Server.Config = typedConfig()
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitCondition(t, ns, "clash", status.TypeReconciled, metav1.ConditionFalse, "NameConflict")
	assert.Contains(t, condition(got, status.TypeReconciled).Message, "ConfigMap "+ns+"/clash-ca-bundle")
	assert.Equal(t, "NameConflict", condition(got, status.TypeTrustReady).Reason)
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "clash", &appsv1.Deployment{})), "nothing is applied")

	// Without a CA source the bundle's name is not needed; the chart's
	// ConfigMap still is, and the gate refuses the whole manifest.
	patchCR(t, ns, "clash", func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{PublicRoots: ptrTo(false)}
		cr.Spec.Replicas = 2
	})
	got = waitCondition(t, ns, "clash", status.TypeReconciled, metav1.ConditionFalse, "NameConflict")
	assert.Contains(t, condition(got, status.TypeReconciled).Message, "ConfigMap "+ns+"/clash-config")
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "clash", &appsv1.Deployment{})), "nothing is applied")
	sameConfigMap(t, bundle)
	sameConfigMap(t, runConfig)

	require.NoError(t, k8s.Delete(context.Background(), got))
	env.Eventually(t, "CR deleted", func() error { return env.Gone(ns, "clash", &llamav1alpha1.LlamaStackDistribution{}) })
	sameConfigMap(t, bundle)
	sameConfigMap(t, runConfig)
}

// An object of the operator's that a user replaced with their own (deleted,
// then created under the same name) is neither repaired nor deleted.
func TestReplacedObjectIsNotRepairedOrDeleted(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "swap")
	cr.Spec.Server.Config = typedConfig()
	require.NoError(t, k8s.Create(context.Background(), cr))
	waitCondition(t, ns, "swap", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	require.NoError(t, k8s.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "swap-config"}}))
	mine := userConfigMap(t, ns, "swap-config")

	got := waitCondition(t, ns, "swap", status.TypeReconciled, metav1.ConditionFalse, "NameConflict")
	assert.Contains(t, condition(got, status.TypeReconciled).Message, "ConfigMap "+ns+"/swap-config")
	sameConfigMap(t, mine)

	require.NoError(t, k8s.Delete(context.Background(), got))
	env.Eventually(t, "CR deleted", func() error { return env.Gone(ns, "swap", &llamav1alpha1.LlamaStackDistribution{}) })
	env.Eventually(t, "Deployment deleted", func() error { return env.Gone(ns, "swap", &appsv1.Deployment{}) })
	sameConfigMap(t, mine)
	require.NoError(t, env.HasReason(t, ns, "swap", "ObjectsLeft"))
}

// typedConfig is the smallest valid typed run configuration.
func typedConfig() *llamav1alpha1.ServerConfig {
	return &llamav1alpha1.ServerConfig{Providers: &llamav1alpha1.Providers{Inference: []llamav1alpha1.Provider{{ProviderID: "vllm", ProviderType: "remote::vllm"}}}}
}

func ptrTo[T any](v T) *T { return &v }

// The operator's finalizer never costs another controller's.
func TestForeignFinalizerIsKept(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "shared")
	cr.Finalizers = []string{"example.com/keep"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	waitCondition(t, ns, "shared", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	stale := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "shared", stale))
	assert.ElementsMatch(t, []string{"example.com/keep", release.Finalizer}, stale.Finalizers)

	// Another controller adds its finalizer after the operator's last read:
	// a patch from the stale copy must fail, not drop it.
	// (The operator may write the status meanwhile: read again on a conflict.)
	fresh := stale.DeepCopy()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Get(ns, "shared", fresh); err != nil {
			return err
		}
		fresh.Finalizers = append(fresh.Finalizers, "example.com/other")
		return k8s.Update(context.Background(), fresh)
	}))
	err := release.RemoveFinalizer(context.Background(), k8s, stale.DeepCopy())
	require.True(t, apierrors.IsConflict(err), "a stale finalizer patch must conflict, got %v", err)
	require.NoError(t, env.Get(ns, "shared", fresh))
	assert.Contains(t, fresh.Finalizers, "example.com/other")

	// Deletion removes the operator's finalizer only.
	require.NoError(t, k8s.Delete(context.Background(), fresh))
	env.Eventually(t, "the operator's finalizer removed", func() error {
		if err := env.Get(ns, "shared", fresh); err != nil {
			return err
		}
		if strings.Join(fresh.Finalizers, ",") != "example.com/keep,example.com/other" {
			return fmt.Errorf("finalizers %v", fresh.Finalizers)
		}
		return nil
	})
	env.Eventually(t, "Deployment deleted", func() error { return env.Gone(ns, "shared", &appsv1.Deployment{}) })
	fresh.Finalizers = nil
	require.NoError(t, k8s.Update(context.Background(), fresh))
	env.Eventually(t, "CR deleted", func() error { return env.Gone(ns, "shared", &llamav1alpha1.LlamaStackDistribution{}) })
}

// Every name the API accepts works: dots and leading digits give valid child
// names (the Service's is a DNS-1035 label).
func TestOddNamesGiveValidChildren(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	for _, name := range []string{"my.llama", "1st-llama"} {
		require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, name)))
	}
	for _, name := range []string{"my.llama", "1st-llama"} {
		cr := waitCondition(t, ns, name, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
		svc := naming.ServiceName(name, "-service")
		assert.NotEqual(t, name+"-service", svc)
		require.NoError(t, env.Get(ns, svc, &corev1.Service{}))
		assert.Equal(t, "http://"+svc+"."+ns+".svc.cluster.local:8321", cr.Status.ServiceURL)
		require.NoError(t, env.Get(ns, name, &appsv1.Deployment{}))
	}
}

// A spec whose rendered object the API server refuses is an invalid spec
// naming the field, sent once: not a failed install retried with backoff.
func TestRefusedChildIsInvalidSpecAndNotResent(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "refused")
	cr.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{
		Volumes:      []corev1.Volume{{Name: "Bad_Name", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "Bad_Name", MountPath: "/data"}},
	}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitCondition(t, ns, "refused", status.TypeReconciled, metav1.ConditionFalse, "InvalidSpec")
	assert.Contains(t, condition(got, status.TypeReconciled).Message, `volumes[1].name: Invalid value: "Bad_Name"`)

	// Sent once: the failed install left one record; sending the values again
	// would upgrade it to a second revision.
	recs := releaseRecords(t, ns, "refused")
	require.Len(t, recs, 1)
	time.Sleep(10 * reconcilePeriod)
	again := releaseRecords(t, ns, "refused")
	require.Len(t, again, 1, "the refused values are not sent again")
	assert.Equal(t, recs[0].ResourceVersion, again[0].ResourceVersion, "the refused values are not sent again")

	// Fixing the spec applies it.
	patchCR(t, ns, "refused", func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.PodOverrides.Volumes[0].Name = "data"
		cr.Spec.Server.PodOverrides.VolumeMounts[0].Name = "data"
	})
	waitCondition(t, ns, "refused", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
}

// Release records live in the operator's namespace, as ConfigMaps: the
// operator sends no request about Secrets at all (its ClusterRole has no
// Secret verb), and records whose CR is gone are swept.
func TestReleaseRecordsAreConfigMapsOfTheOperator(t *testing.T) {
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "records")))
	waitCondition(t, ns, "records", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	recs := releaseRecords(t, ns, "records")
	require.Len(t, recs, 1)
	assert.Equal(t, "LlamaStackDistribution", recs[0].Labels[release.LabelOwnerKind])
	secrets := &corev1.SecretList{}
	require.NoError(t, k8s.List(context.Background(), secrets, client.InNamespace(ns)))
	assert.Empty(t, secrets.Items, "no release Secret in the CR's namespace")
	assert.Zero(t, operatorSecretRequests.Load(), "the operator asked the API server about Secrets")

	// A record whose CR no longer exists (its finalizer was removed by hand,
	// say) is swept by UID; a live CR's record stays.
	orphan := recs[0].DeepCopy()
	orphan.ObjectMeta = metav1.ObjectMeta{Namespace: operatorNamespace, Name: "sh.helm.release.v1.llsd-gone.x.v1", Labels: map[string]string{}}
	for k, v := range recs[0].Labels {
		orphan.Labels[k] = v
	}
	orphan.Labels["name"] = "llsd-gone.x"
	orphan.Labels[release.LabelOwnerUID] = "00000000-0000-0000-0000-000000000000"
	require.NoError(t, k8s.Create(context.Background(), orphan))
	env.Eventually(t, "the orphaned record swept", func() error { return env.Gone(operatorNamespace, orphan.Name, &corev1.ConfigMap{}) })
	assert.Len(t, releaseRecords(t, ns, "records"), 1, "a live CR's record stays")
}
