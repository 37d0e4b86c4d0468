package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A second operator process starting on settled CRs (a restart, or a new
// leader) computes the same values and hashes and writes nothing: no upgrade,
// no rollout, no status update.
func TestAFreshOperatorWritesNothing(t *testing.T) {
	ns := env.NewNamespace(t, "")
	cas := configMap(ns, "cas", map[string]string{"ca-bundle.crt": newCA(t, "restart")})
	require.NoError(t, k8s.Create(context.Background(), cas))
	run := configMap(ns, "run", map[string]string{"config.yaml": "version: 2\n"})
	require.NoError(t, k8s.Create(context.Background(), run))
	cr := framework.LLSD(ns, "steady")
	cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run"}
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "cas"}, PublicRoots: ptr.To(false)}
	require.NoError(t, k8s.Create(context.Background(), cr))
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "steady-tas")))
	waitTrust(t, ns, "steady", "BundleMerged")
	env.WaitLLSD(t, ns, "steady", llamav1alpha1.PhaseInitializing)
	waitTAS(t, ns, "steady-tas", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	time.Sleep(3 * reconcilePeriod)
	settledTAS := &trustyv1.TrustyAIService{}
	require.NoError(t, env.Get(ns, "steady-tas", settledTAS))
	_, depVersion, _ := podTemplate(t, ns, "steady")
	settled := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "steady", settled))

	var writes, releaseReads atomic.Int64
	var log requestLog
	mgr, err := newOperator(restConfig, countingTransport{writes: &writes, releaseReads: &releaseReads, log: &log}, func(o *operator.ManagerOptions) {
		// A second manager in this process; the defaults of a real start
		// (capabilities remembered for a minute, the sweep at start only).
		o.SkipControllerNameValidation = true
		o.CapabilityTTL, o.ReleaseSweepPeriod = 0, 0
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	require.True(t, mgr.GetCache().WaitForCacheSync(ctx))

	// Its first reconciles of every CR, then several periodic ones.
	log.waitReconciles(t, naming.ReleaseName("llsd", ns, "steady"), 0, 4)
	log.waitReconciles(t, naming.ReleaseName("tas", ns, "steady-tas"), 0, 4)
	// Its writes about this test's namespace (other tests' CRs may still be
	// uninstalling, and it takes part in that).
	assert.Empty(t, log.writesAbout(ns, 0), "a fresh operator must not write to settled CRs or their objects")
	_, depAfter, _ := podTemplate(t, ns, "steady")
	assert.Equal(t, depVersion, depAfter, "no rollout")
	after := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "steady", after))
	assert.Equal(t, settled.ResourceVersion, after.ResourceVersion, "no status write")
	afterTAS := &trustyv1.TrustyAIService{}
	require.NoError(t, env.Get(ns, "steady-tas", afterTAS))
	assert.Equal(t, settledTAS.ResourceVersion, afterTAS.ResourceVersion, "no status write")
}
