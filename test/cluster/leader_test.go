package cluster

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
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
// the other sends nothing but lease requests, for 12 s (more than two of the
// standby's retry periods of 5 s).
func TestOneLeaderReconciles(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "leader-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var writes [2]atomic.Int64
	for i := range writes {
		cfg := rest.CopyConfig(config)
		counter := &writes[i]
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return writeCounter{next: rt, writes: counter} }
		stop := framework.RunManager(t, cfg, func(o *operator.ManagerOptions) {
			o.LeaderElection, o.LeaderElectionNamespace = true, "ai-stack-operator-system"
		})
		defer stop()
	}

	cr := framework.LLSD(ns.Name, "led")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 0)
	time.Sleep(12 * time.Second)

	a, b := writes[0].Load(), writes[1].Load()
	t.Logf("writes (leases excluded) by the two replicas in 12 s: %d and %d", a, b)
	if (a == 0) == (b == 0) {
		t.Fatalf("exactly one replica must write: %d and %d", a, b)
	}
	// A new CR costs about 15 writes (release records, objects, status,
	// finalizer, events); idle costs none.
	if total := a + b; total > 40 {
		t.Fatalf("%d writes for one CR in 12 s", total)
	}
}
