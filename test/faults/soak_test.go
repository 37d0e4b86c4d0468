package faults

import (
	"testing"
	"time"

	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
)

// Random operations over many CRs (spec edits, edits of the run.yaml and CA
// ConfigMaps they read, deletes and re-creates, operator kills and
// restarts); then every CR converges, nothing is leaked, and a fresh
// process has nothing to write: every live object is what a fresh render
// gives. `make soak` runs the 30-minute version with 300 CRs and judges RSS.
func TestSoak(t *testing.T) {
	rng := seed(t)
	ns := newNamespace(t, "soak")
	op := operator(t, "soak-op", "")
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	s := chaos.Soak{
		Client: k8s, Namespace: ns, CRs: scale(24, 300), Duration: scale(2*time.Minute, 30*time.Minute),
		Every: scale(300*time.Millisecond, time.Second), Rand: rng, RestartEvery: scale(30*time.Second, 3*time.Minute),
		Restart: func() error {
			if rng.Intn(2) == 0 {
				op.Kill()
			} else {
				op.Stop()
			}
			return op.Start()
		},
		Logf: t.Logf,
	}
	if err := s.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	counts, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if counts["operator restart"] == 0 || counts["delete"] == 0 || counts["spec edit"] == 0 {
		t.Fatalf("the soak missed operations: %s", counts)
	}
	took := waitConverged(t, grace+3*time.Minute, ns)
	t.Logf("converged %s after the soak", took.Round(time.Second))

	op.Stop()
	fresh := operator(t, "soak-fresh", "")
	if err := fresh.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(scale(20*time.Second, 60*time.Second))
	mustRun(t, fresh, "while reconciling settled CRs")
	if ws := writesBy(t, "soak-fresh", ns); ws != 0 {
		t.Errorf("a fresh operator wrote %d times about the soaked CRs: their objects were not what a fresh render gives", ws)
	}
}
