package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// Deleting a CR after an optional API it rendered into was removed (the
// Prometheus operator uninstalled, say) does not hang on the finalizer.
func TestDeletionAfterAnOptionalAPIWasRemoved(t *testing.T) {
	installAPI(t, "monitoring.coreos.com", "ServiceMonitor", "servicemonitors", apiextensionsv1.NamespaceScoped)
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "mon")))
	sm := &unstructured.Unstructured{}
	sm.SetAPIVersion("monitoring.coreos.com/v1")
	sm.SetKind("ServiceMonitor")
	env.Eventually(t, "the ServiceMonitor", func() error { return env.Get(ns, "mon-monitor", sm) })

	removeAPI(t, "servicemonitors.monitoring.coreos.com")

	require.NoError(t, k8s.Delete(context.Background(), framework.LLSD(ns, "mon")))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "mon", &llamav1alpha1.LlamaStackDistribution{}) })
	require.NoError(t, env.Gone(ns, "mon-service", &corev1.Service{}), "what could be deleted is")
	assert.Empty(t, releaseRecords(t, ns, "mon"))
}

// A spec that keeps failing for a reason outside it (here a quota that allows
// no Deployment) is retried with backoff, and its release history stays capped.
func TestFailingInstallStaysBounded(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-deployments"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/deployments.apps": resource.MustParse("0")}},
	}
	require.NoError(t, k8s.Create(context.Background(), quota))
	// The quota controller does not run here; its status must say what is used.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/deployments.apps": resource.MustParse("0")}}
	require.NoError(t, k8s.Status().Update(context.Background(), quota))

	mark := operatorRequests.mark()
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "quota")))
	cr := &llamav1alpha1.LlamaStackDistribution{}
	env.Eventually(t, "Reconciled=False", func() error {
		if err := env.Get(ns, "quota", cr); err != nil {
			return err
		}
		if c := condition(cr, "Reconciled"); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("conditions %+v", cr.Status.Conditions)
		}
		return nil
	})
	time.Sleep(15 * time.Second)
	lists := operatorRequests.releaseLists(naming.ReleaseName("llsd", ns, "quota"), mark)
	recs := releaseRecords(t, ns, "quota")
	t.Logf("after 15 s of failures: %d release records, %d lists of them (one or more per reconcile), reason %s", len(recs), lists, condition(cr, "Reconciled").Reason)
	assert.LessOrEqual(t, len(recs), 3, "release history is capped (maxReleaseHistory)")
	// Every 300 ms (the suite's period) would be 50 reconciles, a loop thousands.
	assert.Less(t, lists, 80, "failures are retried with backoff, not in a loop")
	require.NoError(t, k8s.Delete(context.Background(), quota))
	env.WaitLLSD(t, ns, "quota", llamav1alpha1.PhaseInitializing)
}

// Deleting a CR whose release records were deleted by hand does not hang:
// there is nothing left to uninstall, and the finalizer goes.
func TestDeletionAfterTheRecordsWereDeletedByHand(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "norecords")))
	env.WaitLLSD(t, ns, "norecords", llamav1alpha1.PhaseInitializing)
	for _, rec := range releaseRecords(t, ns, "norecords") {
		require.NoError(t, k8s.Delete(context.Background(), &rec))
	}
	require.Empty(t, releaseRecords(t, ns, "norecords"))
	require.NoError(t, k8s.Delete(context.Background(), framework.LLSD(ns, "norecords")))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "norecords", &llamav1alpha1.LlamaStackDistribution{}) })
}
