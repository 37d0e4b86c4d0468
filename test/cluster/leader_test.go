package cluster

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/controller"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

// writeCounter counts the writes a manager sends, leader election aside.
type writeCounter struct {
	next   http.RoundTripper
	writes *atomic.Int64
}

func (w writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead && !strings.Contains(req.URL.Path, "/leases") {
		w.writes.Add(1)
	}
	return w.next.RoundTrip(req)
}

// Two replicas of the operator with --leader-elect: one leads and reconciles,
// the other sends nothing but lease requests, for a minute.
func TestOneLeaderReconciles(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "leader-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	ws, err := watches.Load(filepath.Join("..", "..", "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var writes [2]atomic.Int64
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	for i := range writes {
		cfg := rest.CopyConfig(cluster.Config)
		counter := &writes[i]
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return writeCounter{next: rt, writes: counter} }
		mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
			Watches: ws, MetricsAddr: "0", ProbeAddr: "0", OperatorNamespace: "ai-stack-operator-system",
			SettingsConfigMap: "ai-stack-operator-config", SkipControllerNameValidation: true,
			LeaderElection: true, LeaderElectionNamespace: "ai-stack-operator-system",
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- mgr.Start(runCtx) }()
	}
	defer func() {
		cancel()
		for range writes {
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		}
	}()

	cr := &llamav1alpha1.LlamaStackDistribution{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "led"},
		Spec:       llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{Distribution: llamav1alpha1.DistributionType{Name: "starter"}}},
	}
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "phase Ready", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		if cr.Status.Phase != llamav1alpha1.PhaseReady {
			return fmt.Errorf("phase %q", cr.Status.Phase)
		}
		return nil
	})
	time.Sleep(60 * time.Second)

	a, b := writes[0].Load(), writes[1].Load()
	t.Logf("writes (leases excluded) by the two replicas in 60 s: %d and %d", a, b)
	if (a == 0) == (b == 0) {
		t.Fatalf("exactly one replica must write: %d and %d", a, b)
	}
	// A new CR costs about 15 writes (release records, objects, status,
	// finalizer, events); idle costs none.
	if total := a + b; total > 40 {
		t.Fatalf("%d writes for one CR in a minute", total)
	}
}
