package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

func condition(cr *llamav1alpha1.LlamaStackDistribution, t string) *metav1.Condition {
	return meta.FindStatusCondition(cr.Status.Conditions, t)
}

func TestCreateRendersEveryObject(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "demo")
	size := resource.MustParse("5Gi")
	cr.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &size}
	cr.Spec.Server.ContainerSpec.Env = []corev1.EnvVar{{Name: "INFERENCE_MODEL", Value: "llama3.2:1b"}}
	require.NoError(t, k8s.Create(context.Background(), cr))

	got := env.WaitLLSD(t, ns, "demo", llamav1alpha1.PhaseInitializing)
	assert.Contains(t, got.Finalizers, release.Finalizer)
	assert.Equal(t, "http://demo-service."+ns+".svc.cluster.local:8321", got.Status.ServiceURL)
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReconciled).Status)
	assert.Equal(t, metav1.ConditionFalse, condition(got, status.TypeDeploymentReady).Status)
	assert.Equal(t, "starter", got.Status.DistributionConfig.ActiveDistribution)
	assert.NotEmpty(t, got.Status.Version.OperatorVersion)
	for _, c := range got.Status.Conditions {
		assert.Equal(t, got.Generation, c.ObservedGeneration, c.Type)
	}

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "demo", dep))
	assert.Equal(t, distributions.Default()["starter"], dep.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, dep.Spec.Strategy.Type, "RWO storage needs Recreate")
	assert.Equal(t, "true", dep.Labels[release.LabelManaged])
	assert.Equal(t, "Helm", dep.Labels["app.kubernetes.io/managed-by"])
	assert.Equal(t, map[string]string{"app": "llama-stack", "app.kubernetes.io/instance": "demo"}, dep.Spec.Selector.MatchLabels)
	assert.Equal(t, "demo-sa", dep.Spec.Template.Spec.ServiceAccountName)
	assert.Contains(t, dep.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "INFERENCE_MODEL", Value: "llama3.2:1b"})
	assert.Contains(t, dep.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "HF_HOME", Value: "/.llama"}, "the HuggingFace cache, on the storage")
	// As upstream: requests always (one CPU, 1Gi), no limits without workers.
	res := dep.Spec.Template.Spec.Containers[0].Resources
	assert.Equal(t, "1", ptr.To(res.Requests[corev1.ResourceCPU]).String())
	assert.Equal(t, "1Gi", ptr.To(res.Requests[corev1.ResourceMemory]).String())
	assert.Empty(t, res.Limits)
	assert.Nil(t, condition(got, llamastack.TypeAllowedFromValid), "no allowedFrom, no condition")
	require.Len(t, dep.OwnerReferences, 1)
	assert.Equal(t, "LlamaStackDistribution", dep.OwnerReferences[0].Kind)
	assert.Equal(t, got.UID, dep.OwnerReferences[0].UID)
	assert.True(t, *dep.OwnerReferences[0].Controller)

	svc := &corev1.Service{}
	require.NoError(t, env.Get(ns, "demo-service", svc))
	require.Len(t, svc.Spec.Ports, 1)
	assert.Equal(t, "http", svc.Spec.Ports[0].Name)
	assert.Equal(t, int32(8321), svc.Spec.Ports[0].Port)

	require.NoError(t, env.Get(ns, "demo-sa", &corev1.ServiceAccount{}))
	pvc := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "demo-pvc", pvc))
	assert.Equal(t, "5Gi", ptr.To(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).String())

	secrets := releaseRecords(t, ns, "demo")
	require.Len(t, secrets, 1)
	assert.Equal(t, framework.Key(naming.ReleaseName("llsd", ns, "demo"), 1), secrets[0].Name)
	assert.Equal(t, string(got.UID), secrets[0].Labels[release.LabelOwnerUID])
	assert.Equal(t, ns, secrets[0].Labels[release.LabelOwnerNamespace])
	assert.Equal(t, "true", secrets[0].Labels[release.LabelManaged])
}

func TestUpdateIsFollowed(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "upd")))
	env.WaitLLSD(t, ns, "upd", llamav1alpha1.PhaseInitializing)

	cr := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "upd", cr))
	orig := cr.DeepCopy()
	cr.Spec.Replicas = 2
	cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "quay.io/example/llama:v2"}
	require.NoError(t, k8s.Patch(context.Background(), cr, client.MergeFrom(orig)))

	dep := &appsv1.Deployment{}
	env.Eventually(t, "the Deployment to follow the CR", func() error {
		if err := env.Get(ns, "upd", dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "quay.io/example/llama:v2" {
			return fmt.Errorf("replicas %d image %s", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
		}
		return nil
	})
	// The new revision's record is written once, deployed, after the objects
	// are applied and the old one is marked superseded (heldPending): wait.
	env.Eventually(t, "one upgrade, two revisions", func() error {
		if n := len(releaseRecords(t, ns, "upd")); n != 2 {
			return fmt.Errorf("%d release records", n)
		}
		return nil
	})

	// Readiness from real pods and rollouts: test/cluster TestUpdateRollsOutAndReadyFollowsThePods.
}

func TestUnchangedCRWritesNothing(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "quiet")))
	env.WaitLLSD(t, ns, "quiet", llamav1alpha1.PhaseInitializing)
	// Let the reconciles that the status write itself caused pass.
	time.Sleep(2 * reconcilePeriod)

	versions := func() map[string]string {
		out := map[string]string{}
		for name, obj := range map[string]client.Object{
			"quiet":         &llamav1alpha1.LlamaStackDistribution{},
			"quiet-deploy":  &appsv1.Deployment{},
			"quiet-service": &corev1.Service{},
			"quiet-sa":      &corev1.ServiceAccount{},
		} {
			key := strings.TrimSuffix(name, "-deploy")
			require.NoError(t, env.Get(ns, key, obj))
			out[name] = obj.GetResourceVersion()
		}
		for _, s := range releaseRecords(t, ns, "quiet") {
			out[s.Name] = s.ResourceVersion
		}
		return out
	}
	before := versions()
	mark := operatorRequests.mark()
	// Several reconciles of the unchanged CR.
	operatorRequests.waitReconciles(t, naming.ReleaseName("llsd", ns, "quiet"), mark, 5)
	assert.Equal(t, before, versions(), "reconciling an unchanged CR must change nothing")
	assert.Empty(t, operatorRequests.writesAbout(ns, mark), "reconciling an unchanged CR must send no write at all (patch, update, create, event)")
}

func TestDriftIsRepaired(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "drift")))
	env.WaitLLSD(t, ns, "drift", llamav1alpha1.PhaseInitializing)

	require.NoError(t, k8s.Delete(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift-service"}}))
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "drift", dep))
	orig := dep.DeepCopy()
	dep.Spec.Replicas = ptr.To(int32(5))
	require.NoError(t, k8s.Patch(context.Background(), dep, client.MergeFrom(orig)))
	// An object the operator's cache holds in full: its edited copy there is
	// compared, found different, read and restored.
	np := &networkingv1.NetworkPolicy{}
	require.NoError(t, env.Get(ns, "drift-network-policy", np))
	wantSelector := np.Spec.PodSelector.DeepCopy()
	npOrig := np.DeepCopy()
	np.Spec.PodSelector.MatchLabels["app"] = "edited-by-hand"
	require.NoError(t, k8s.Patch(context.Background(), np, client.MergeFrom(npOrig)))

	svc := &corev1.Service{}
	env.Eventually(t, "the Service to come back", func() error { return env.Get(ns, "drift-service", svc) })
	// As Helm would have made it: the next reconciles see their own object.
	assert.Equal(t, naming.ReleaseName("llsd", ns, "drift"), svc.Annotations["meta.helm.sh/release-name"])
	assert.Equal(t, "Helm", svc.Labels["app.kubernetes.io/managed-by"])
	env.Eventually(t, "the Deployment's replicas to be restored", func() error {
		if err := env.Get(ns, "drift", dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 1 {
			return fmt.Errorf("replicas %d", *dep.Spec.Replicas)
		}
		return nil
	})
	env.Eventually(t, "the NetworkPolicy's selector to be restored", func() error {
		if err := env.Get(ns, "drift-network-policy", np); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(np.Spec.PodSelector, *wantSelector) {
			return fmt.Errorf("selector %v", np.Spec.PodSelector)
		}
		return nil
	})
	assert.Len(t, releaseRecords(t, ns, "drift"), 1, "drift repair is not an upgrade")
	time.Sleep(5 * reconcilePeriod)
	cr := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "drift", cr))
	if c := condition(cr, "Reconciled"); assert.NotNil(t, c) {
		assert.Equal(t, metav1.ConditionTrue, c.Status, "after the repair: %s", c.Message)
	}
}

func TestDeleteRemovesObjectsAndRelease(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "del")
	cr.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
	require.NoError(t, k8s.Create(context.Background(), cr))
	env.WaitLLSD(t, ns, "del", llamav1alpha1.PhaseInitializing)
	require.NoError(t, env.Get(ns, "del-pvc", &corev1.PersistentVolumeClaim{}))

	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the CR to be gone", func() error { return env.Gone(ns, "del", &llamav1alpha1.LlamaStackDistribution{}) })
	for name, obj := range map[string]client.Object{
		"del":         &appsv1.Deployment{},
		"del-service": &corev1.Service{},
		"del-sa":      &corev1.ServiceAccount{},
	} {
		require.NoError(t, env.Gone(ns, name, obj))
	}
	assert.Zero(t, len(releaseRecords(t, ns, "del")), "the release is uninstalled")

	// The data outlives the CR: Helm keeps the claim
	// (helm.sh/resource-policy: keep) and it has no owner reference that a
	// garbage collector could follow. Re-creating the CR adopts it again.
	pvc := &corev1.PersistentVolumeClaim{}
	require.NoError(t, env.Get(ns, "del-pvc", pvc))
	assert.Nil(t, pvc.DeletionTimestamp)
	assert.Empty(t, pvc.OwnerReferences)
	claimUID := pvc.UID

	again := framework.LLSD(ns, "del")
	again.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
	require.NoError(t, k8s.Create(context.Background(), again))
	env.WaitLLSD(t, ns, "del", llamav1alpha1.PhaseInitializing)
	require.NoError(t, env.Get(ns, "del-pvc", pvc))
	assert.Equal(t, claimUID, pvc.UID, "the same claim, with its data")
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "del", dep))
	assert.Equal(t, "del-pvc", dep.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
}

func TestInvalidSpecKeepsTheLastGoodState(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "bad")))
	env.WaitLLSD(t, ns, "bad", llamav1alpha1.PhaseInitializing)

	cr := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "bad", cr))
	orig := cr.DeepCopy()
	cr.Spec.Server.Distribution.Name = "no-such-distribution"
	cr.Spec.Replicas = 3
	require.NoError(t, k8s.Patch(context.Background(), cr, client.MergeFrom(orig)))

	failed := env.WaitLLSD(t, ns, "bad", llamav1alpha1.PhaseFailed)
	c := condition(failed, status.TypeReconciled)
	assert.Equal(t, "InvalidSpec", c.Reason)
	assert.Contains(t, c.Message, "spec.server.distribution.name")
	assert.Contains(t, c.Message, "valid names: ")
	assert.Contains(t, c.Message, "starter")
	env.Eventually(t, "an InvalidSpec event", func() error { return env.HasReason(t, ns, "bad", "InvalidSpec") })

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "bad", dep))
	assert.Equal(t, int32(1), *dep.Spec.Replicas, "the last good state keeps running")
	assert.Len(t, releaseRecords(t, ns, "bad"), 1)

	require.NoError(t, env.Get(ns, "bad", cr))
	orig = cr.DeepCopy()
	cr.Spec.Server.Distribution.Name = "starter"
	require.NoError(t, k8s.Patch(context.Background(), cr, client.MergeFrom(orig)))
	env.WaitLLSD(t, ns, "bad", llamav1alpha1.PhaseInitializing)
	env.Eventually(t, "the fixed spec to apply", func() error {
		if err := env.Get(ns, "bad", dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 3 {
			return fmt.Errorf("replicas %d", *dep.Spec.Replicas)
		}
		return nil
	})
}

func TestAPIRejectsNameAndImageTogether(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "both")
	cr.Spec.Server.Distribution.Image = "quay.io/example/llama:v1"
	err := k8s.Create(context.Background(), cr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set exactly one of spec.server.distribution.name")

	cr = framework.LLSD(ns, "neither")
	cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{}
	err = k8s.Create(context.Background(), cr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set exactly one of spec.server.distribution.name")
}

func TestPendingReleaseIsRepaired(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "stuck")))
	env.WaitLLSD(t, ns, "stuck", llamav1alpha1.PhaseInitializing)

	// Play an operator killed in the middle of an upgrade: the latest
	// revision is left pending-upgrade, which blocks every Helm action.
	store := framework.NewRecords(clientset, operatorNamespace)
	relName := naming.ReleaseName("llsd", ns, "stuck")
	rel, err := store.Get(relName, 1)
	require.NoError(t, err)
	rel.Info.Status = rcommon.StatusPendingUpgrade
	rel.Info.LastDeployed = time.Now()
	require.NoError(t, store.Update(rel))

	cr := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "stuck", cr))
	orig := cr.DeepCopy()
	cr.Spec.Replicas = 2
	require.NoError(t, k8s.Patch(context.Background(), cr, client.MergeFrom(orig)))

	// A fresh pending release may belong to a replica still at work: left alone.
	busy := &llamav1alpha1.LlamaStackDistribution{}
	env.Eventually(t, "Reconciled=False ReleaseBusy", func() error {
		if err := env.Get(ns, "stuck", busy); err != nil {
			return err
		}
		if c := condition(busy, status.TypeReconciled); c == nil || c.Reason != "ReleaseBusy" || c.ObservedGeneration != busy.Generation {
			return fmt.Errorf("conditions %+v", busy.Status.Conditions)
		}
		return nil
	})
	time.Sleep(5 * reconcilePeriod)
	pending, err := store.Get(relName, 1)
	require.NoError(t, err)
	assert.Equal(t, rcommon.StatusPendingUpgrade, pending.Info.Status, "a pending release younger than the grace period is not touched")

	// One left pending longer than the grace period is a killed operator's.
	pending.Info.LastDeployed = time.Now().Add(-10 * time.Minute)
	require.NoError(t, store.Update(pending))

	dep := &appsv1.Deployment{}
	env.Eventually(t, "the upgrade to go through", func() error {
		if err := env.Get(ns, "stuck", dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 2 {
			return fmt.Errorf("replicas %d", *dep.Spec.Replicas)
		}
		return nil
	})
	env.Eventually(t, "a ReleaseRepaired event", func() error { return env.HasReason(t, ns, "stuck", "ReleaseRepaired") })
	got := env.WaitLLSD(t, ns, "stuck", llamav1alpha1.PhaseInitializing)
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReconciled).Status)
}

func TestLongNamesGiveValidChildNames(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	name := strings.Repeat("l", 70)
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, name)))
	got := env.WaitLLSD(t, ns, name, llamav1alpha1.PhaseInitializing)
	assert.Contains(t, got.Status.ServiceURL, "-service."+ns)
	list := &corev1.ServiceList{}
	require.NoError(t, k8s.List(context.Background(), list, client.InNamespace(ns)))
	require.Len(t, list.Items, 1)
	assert.LessOrEqual(t, len(list.Items[0].Name), 63)
	assert.True(t, strings.HasSuffix(list.Items[0].Name, "-service"))
}

// A new CR costs its rendered objects + 3 writes: the finalizer, the release
// record and one status (the first status reads objects the cache does not
// hold yet from the API server, so it is not rewritten a moment later); no
// event: the install is in the status, and conditions that start out as
// expected emit none (seven events per CR before issue 13, one before issue
// 33). The log cannot attribute the release record's create (its path names
// no CR), so the total is one more than listed. The writes are printed for
// the record.
func TestNewCRWrites(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	mark := operatorRequests.mark()
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "count")))
	env.WaitLLSD(t, ns, "count", llamav1alpha1.PhaseInitializing)
	time.Sleep(5 * reconcilePeriod)
	writes := operatorRequests.writesAbout(ns, mark)
	events, creates := kindsOfWrites(writes, ns)
	t.Logf("%d writes for a new LlamaStackDistribution (%d rendered objects created, %d events):\n%s", len(writes), creates, events, strings.Join(writes, "\n"))
	assert.Zero(t, events, "no event: the install is in the status")
	// Objects + 3 (issue 33's target; the record's create is not listed),
	// and one spare: on a loaded machine a second status write can come
	// (seen for a TrustyAIService in a fresh-clone CI run); make bench
	// measures the average per CR.
	assert.LessOrEqual(t, len(writes)+1, creates+4, "writes, the record's included, <= rendered objects + 3 and one spare status")
}

// The reconcile's phases are timed into ai_stack_operator_reconcile_phase_seconds
// (the operator runs in this process, so its registry is this one).
func TestReconcilePhaseMetrics(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "timed")))
	env.WaitLLSD(t, ns, "timed", llamav1alpha1.PhaseInitializing)
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "ai_stack_operator_reconcile_phase_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == "LlamaStackDistribution" {
				counts[labels["phase"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	for _, phase := range []string{"gather", "prepare", "apply", "status"} {
		assert.Positive(t, counts[phase], "phase %s timed", phase)
	}
}
