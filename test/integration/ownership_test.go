package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// fixedNamespace creates a namespace of a given name for a test.
func fixedNamespace(t *testing.T, name string) string {
	t.Helper()
	require.NoError(t, k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	t.Cleanup(func() {
		_ = k8s.DeleteAllOf(context.Background(), &llamav1alpha1.LlamaStackDistribution{}, client.InNamespace(name))
	})
	return name
}

// uidOf is the UID of an object, "" when it does not exist.
func uidOf(t *testing.T, ns, name string, obj client.Object) types.UID {
	t.Helper()
	if err := env.Get(ns, name, obj); err != nil {
		require.True(t, apierrors.IsNotFound(err), "%v", err)
		return ""
	}
	return obj.GetUID()
}

// Two CRs in two namespaces whose releases were one under the 32-bit names
// of earlier versions (pkg/naming's collidingPair, found by a birthday
// search): creating the second made the operator delete the first's
// objects, deleting it wiped the first's release records. Each has its own
// release now, and neither touches the other's objects or records.
func TestReleaseNamesDoNotCollideAcrossNamespaces(t *testing.T) {
	t.Parallel()
	victimNS := fixedNamespace(t, "payments-analytics-platform-team-tenant-prod")
	thiefNS := fixedNamespace(t, "payments-analytics-platform-team-tenant-dev")
	victim, thief := "fraud-metrics-738531", "metrics-10785"
	require.Equal(t, naming.LegacyReleaseName("llsd", victimNS, victim), naming.LegacyReleaseName("llsd", thiefNS, thief), "the pair collided before")

	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(victimNS, victim)))
	waitCondition(t, victimNS, victim, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	deployment := uidOf(t, victimNS, victim, &appsv1.Deployment{})
	service := uidOf(t, victimNS, victim+"-service", &corev1.Service{})
	require.NotEmpty(t, deployment)
	records := releaseRecords(t, victimNS, victim)
	require.Len(t, records, 1)

	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(thiefNS, thief)))
	waitCondition(t, thiefNS, thief, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	require.NoError(t, env.Get(thiefNS, thief, &appsv1.Deployment{}), "the second CR has its own objects")
	time.Sleep(5 * reconcilePeriod)
	assert.Equal(t, deployment, uidOf(t, victimNS, victim, &appsv1.Deployment{}), "the first CR's Deployment is untouched")
	assert.Equal(t, service, uidOf(t, victimNS, victim+"-service", &corev1.Service{}), "the first CR's Service is untouched")

	require.NoError(t, k8s.Delete(context.Background(), framework.LLSD(thiefNS, thief)))
	env.Eventually(t, "the second CR deleted", func() error { return env.Gone(thiefNS, thief, &llamav1alpha1.LlamaStackDistribution{}) })
	assert.Equal(t, deployment, uidOf(t, victimNS, victim, &appsv1.Deployment{}), "the first CR's Deployment outlives the second CR")
	after := releaseRecords(t, victimNS, victim)
	require.Len(t, after, 1, "the first CR's records outlive the second CR")
	assert.Equal(t, records[0].UID, after[0].UID)
}

// In one namespace no search is needed: a CR named what a long name was cut
// to had that name's release.
func TestReleaseNamesDoNotCollideInANamespace(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	long := strings.Repeat("model-", 8) + "serving"
	thief := strings.TrimPrefix(naming.LegacyReleaseName("llsd", ns, long), "llsd-"+ns+".")
	require.Equal(t, naming.LegacyReleaseName("llsd", ns, long), naming.LegacyReleaseName("llsd", ns, thief), "the pair collided before")

	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, long)))
	waitCondition(t, ns, long, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	deployment := uidOf(t, ns, long, &appsv1.Deployment{})
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, thief)))
	waitCondition(t, ns, thief, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	require.NoError(t, k8s.Delete(context.Background(), framework.LLSD(ns, thief)))
	env.Eventually(t, "the second CR deleted", func() error { return env.Gone(ns, thief, &llamav1alpha1.LlamaStackDistribution{}) })
	assert.Equal(t, deployment, uidOf(t, ns, long, &appsv1.Deployment{}), "the long-named CR's Deployment is untouched")
	recs := &corev1.ConfigMapList{}
	require.NoError(t, k8s.List(context.Background(), recs, client.InNamespace(operatorNamespace), client.MatchingLabels{"owner": "helm", "name": naming.ReleaseName("llsd", ns, long)}))
	require.Len(t, recs.Items, 1, "the long-named CR's record stays")
	assert.Equal(t, naming.NameLabel(long), recs.Items[0].Labels[release.LabelOwnerName])
}

// An upgrade deletes only what the operator created for this CR: a
// ConfigMap the user put in place of the operator's <name>-config, which the
// CR then names as its userConfig, survives the upgrade that drops the
// operator's, and the CR says it was left.
func TestUpgradeLeavesWhatItDidNotCreate(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "swap2")
	cr.Spec.Server.Config = typedConfig()
	require.NoError(t, k8s.Create(context.Background(), cr))
	waitCondition(t, ns, "swap2", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	require.NoError(t, k8s.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "swap2-config"}}))
	mine := userConfigMap(t, ns, "swap2-config")
	waitCondition(t, ns, "swap2", status.TypeReconciled, metav1.ConditionFalse, "NameConflict")

	patchCR(t, ns, "swap2", func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.Config = nil
		cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "swap2-config"}
	})
	waitCondition(t, ns, "swap2", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	env.Eventually(t, "an ObjectsLeft event", func() error { return env.HasReason(t, ns, "swap2", "ObjectsLeft") })
	sameConfigMap(t, mine)
}

// A CR re-created after its finalizer was removed by hand takes its objects
// over: its records and objects name the dead CR's UID, so the release is
// upgraded and every object names the new CR as its controller. (Repairing
// drift toward the stored manifest kept the dead owner, and on a cluster the
// garbage collector deleted what drift repair re-created, again and again.)
// The dead CR's state is made by rewriting the live CR's UID in its records
// and objects: removing a finalizer by hand races the operator, which adds
// it back.
func TestRecreatedCRTakesItsObjectsOver(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, framework.LLSD(ns, "again")))
	cr := waitCondition(t, ns, "again", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	const dead = "00000000-dead-4000-8000-000000000000"

	releases := framework.NewRecords(clientset, operatorNamespace)
	relName := naming.ReleaseName("llsd", ns, "again")
	// First the stored manifest names the dead CR, the record still this
	// one: drift repair, toward that manifest, leaves objects naming the
	// dead CR as they are.
	rel, err := releases.Deployed(relName)
	require.NoError(t, err)
	require.Contains(t, rel.Manifest, string(cr.UID))
	rel.Manifest = strings.ReplaceAll(rel.Manifest, string(cr.UID), dead)
	require.NoError(t, releases.Update(rel))
	owned := []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}}
	names := []string{"again", "again-service", "again-sa"}
	// Then the objects: a repair under way toward the earlier manifest may
	// set one back, so each is written until a pass finds all naming the
	// dead CR.
	env.Eventually(t, "every object names the dead CR", func() error {
		var written []string
		for i, obj := range owned {
			if err := env.Get(ns, names[i], obj); err != nil {
				return err
			}
			refs := obj.GetOwnerReferences()
			require.Len(t, refs, 1)
			if refs[0].UID == dead {
				continue
			}
			refs[0].UID = dead
			obj.SetOwnerReferences(refs)
			if err := k8s.Update(ctx, obj); err != nil {
				return err
			}
			written = append(written, names[i])
		}
		if len(written) > 0 {
			return fmt.Errorf("wrote %v", written)
		}
		return nil
	})
	// Last the record's owner: the dead CR's state is whole, and the test
	// writes nothing more. (Objects written while the operator upgrades
	// race its three-way patch, which then drops the dead reference from an
	// object the test has just given it: no controller at all.)
	rel, err = releases.Deployed(relName)
	require.NoError(t, err)
	rel.Labels[release.LabelOwnerUID] = dead
	require.NoError(t, releases.Update(rel))

	for i, obj := range owned {
		env.Eventually(t, names[i]+" names the live CR as its controller", func() error {
			if err := env.Get(ns, names[i], obj); err != nil {
				return err
			}
			if c := metav1.GetControllerOf(obj); c == nil || c.UID != cr.UID {
				return fmt.Errorf("controller %+v", c)
			}
			return nil
		})
	}
	env.Eventually(t, "the deployed record names the live CR", func() error {
		for _, r := range releaseRecords(t, ns, "again") {
			if r.Labels["status"] == "deployed" && r.Labels[release.LabelOwnerUID] == string(cr.UID) {
				return nil
			}
		}
		return assert.AnError
	})
}

// A spec whose release record the API server cannot hold is an invalid spec
// naming the largest field, and nothing is applied: Helm applied it, failed
// to store the record without a word, reported success, and installed it
// again on every reconcile.
func TestOversizedRecordIsInvalidSpec(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	noise := make([]byte, 600<<10)
	_, err := rand.Read(noise)
	require.NoError(t, err)
	cr := framework.LLSD(ns, "huge")
	cr.Spec.Server.ContainerSpec.Env = []corev1.EnvVar{{Name: "SMALL", Value: "x"}, {Name: "NOISE", Value: base64.StdEncoding.EncodeToString(noise)}}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitCondition(t, ns, "huge", status.TypeReconciled, metav1.ConditionFalse, "InvalidSpec")
	msg := condition(got, status.TypeReconciled).Message
	assert.Contains(t, msg, "spec.server.containerSpec.env[1].value")
	assert.Contains(t, msg, "nothing was applied")
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "huge", &appsv1.Deployment{})), "nothing is applied")
	assert.Empty(t, releaseRecords(t, ns, "huge"))

	// A smaller value applies.
	patchCR(t, ns, "huge", func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.ContainerSpec.Env = cr.Spec.Server.ContainerSpec.Env[:1]
	})
	waitCondition(t, ns, "huge", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	assert.Len(t, releaseRecords(t, ns, "huge"), 1)
}

// A TrustyAIService whose Service and ServiceAccount names are another
// team's is a NameConflict, and nothing is written for it outside Helm
// either: ModelMesh's payload processor is not pointed at the other team's
// Service, and no ClusterRoleBinding binds their ServiceAccount to the
// cluster-wide review role.
func TestTrustyAIServiceWritesNothingOnConflict(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-ovms")))
	theirs := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tas", Labels: map[string]string{"team": "b"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}},
	}
	require.NoError(t, k8s.Create(ctx, theirs))
	require.NoError(t, k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tas-proxy"}}))

	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	waitTAS(t, ns, "tas", "ProvisioningSucceeded", metav1.ConditionFalse, "NameConflict")
	never(t, 3*time.Second, "a write for the conflicting CR", func() error {
		if got := processorsOf(t, ns, "modelmesh-serving-ovms"); got != "-" {
			return nil
		}
		crbs := &rbacv1.ClusterRoleBindingList{}
		require.NoError(t, k8s.List(ctx, crbs))
		for _, b := range crbs.Items {
			for _, s := range b.Subjects {
				if s.Namespace == ns {
					return nil
				}
			}
		}
		return assert.AnError
	})

	// Once the other team's objects are gone, the service is wired.
	require.NoError(t, k8s.Delete(ctx, theirs))
	require.NoError(t, k8s.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tas-proxy"}}))
	waitProcessors(t, ns, "modelmesh-serving-ovms", "http://tas."+ns+".svc/consumer/kserve/v2")
}

// Objects a new spec no longer renders are deleted even when the release
// records were deleted by hand: the install that follows finds no earlier
// manifest to compare with, and the operator's objects of this CR that it
// does not render (here the PodDisruptionBudget of two replicas) went on
// running, owned by a live CR.
func TestUnrenderedObjectsGoWhenRecordsWereLost(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "lost")))
	cr := waitCondition(t, ns, "lost", status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	// The PodDisruptionBudget an earlier spec of two replicas rendered, as
	// the operator applied it.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "lost-pdb",
			Labels:          map[string]string{release.LabelManaged: "true", "app.kubernetes.io/managed-by": "Helm"},
			Annotations:     map[string]string{"meta.helm.sh/release-name": naming.ReleaseName("llsd", ns, "lost"), "meta.helm.sh/release-namespace": ns},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cr, llamav1alpha1.GroupVersion.WithKind("LlamaStackDistribution"))},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
	}
	require.NoError(t, k8s.Create(context.Background(), pdb))
	mine := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users-pdb"}, Spec: pdb.Spec}
	require.NoError(t, k8s.Create(context.Background(), mine))

	for _, rec := range releaseRecords(t, ns, "lost") {
		require.NoError(t, k8s.Delete(context.Background(), &rec))
	}
	env.Eventually(t, "the PodDisruptionBudget deleted", func() error { return env.Gone(ns, "lost-pdb", &policyv1.PodDisruptionBudget{}) })
	require.NoError(t, env.Get(ns, "lost", &appsv1.Deployment{}), "what the spec renders stays")
	require.NoError(t, env.Get(ns, "users-pdb", &policyv1.PodDisruptionBudget{}), "what the operator did not create stays")
}

// The proxy ClusterRoleBinding of a TrustyAIService whose finalizer was
// removed by hand (so no uninstall ran) is swept once the CR is gone.
func TestProxyBindingOfAGoneCRIsSwept(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "tas")))
	cr := waitTAS(t, ns, "tas", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	name := "trustyai-proxy." + ns + ".tas"
	env.Eventually(t, "the proxy binding", func() error { return env.Get("", name, &rbacv1.ClusterRoleBinding{}) })
	env.Update(t, cr, func() { cr.Finalizers = nil })
	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the proxy binding swept", func() error { return env.Gone("", name, &rbacv1.ClusterRoleBinding{}) })
}
