// Package cluster runs the operator's manager against the local cluster of
// internal/localcluster (controllers, scheduler, simulated nodes), for what
// needs real pods, rollouts, garbage collection, RBAC and a leader election.
// With LOCAL_CLUSTER_KUBECONFIG set (hack/e2e.sh) the suite uses that
// running cluster, which the kuttl suites share, instead of booting its own.
package cluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
	"k8s.io/client-go/rest"
)

var (
	// config is the cluster administrator's; env the tests' view, k8s its client.
	config *rest.Config
	env    *framework.Env
	k8s    client.Client
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if kc := os.Getenv("LOCAL_CLUSTER_KUBECONFIG"); kc != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			return framework.Fail(err)
		}
		config = cfg
	} else {
		dir, err := os.MkdirTemp("", "cluster-test-")
		if err != nil {
			return framework.Fail(err)
		}
		defer os.RemoveAll(dir)
		c, err := localcluster.Start(context.Background(), localcluster.Options{Dir: dir, CRDDirs: []string{filepath.Join(framework.Root(), "config", "crd", "bases")}})
		if err != nil {
			return framework.Fail(err)
		}
		defer func() { _ = c.Stop() }()
		config = c.Config
	}
	var err error
	if env, err = framework.NewEnv(config, 60*time.Second); err != nil {
		return framework.Fail(err)
	}
	k8s = env.Client
	if err := framework.CreateOperatorNamespace(k8s); err != nil {
		return framework.Fail(err)
	}
	return m.Run()
}

// startOperator runs the operator's manager, as the cluster's administrator,
// until the returned function is called.
func startOperator(t *testing.T) (stop func()) {
	t.Helper()
	return framework.RunManager(t, config, nil)
}
