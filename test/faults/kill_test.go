package faults

import (
	"testing"
	"time"
)

// The operator is SIGKILLed at random points while it installs a batch of
// CRs and again while it upgrades them, and started again at once. Each CR
// then converges to what its release renders (one deployed revision,
// nothing pending, its objects as rendered, nothing leaked) within the
// pending-release grace + 60 s of the last restart, and a fresh process
// that reconciles them all writes nothing about them.
func TestKilledMidFlight(t *testing.T) {
	rng := seed(t)
	ns := newNamespace(t, "killed")
	crs := batch(ns, scale(16, 80))
	rounds := scale(3, 6)
	op := runOperator(t, "killed-op", "")

	kills := func(phase string) {
		for r := 1; r <= rounds; r++ {
			// Kill points spread over the batch: it takes a few seconds.
			d := time.Duration(rng.Int63n(int64(scale(3*time.Second, 8*time.Second)))) + 200*time.Millisecond
			time.Sleep(d)
			op.Kill()
			t.Logf("%s: killed after %s (round %d)", phase, d.Round(time.Millisecond), r)
			if err := op.Start(); err != nil {
				t.Fatal(err)
			}
		}
	}

	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	wait := create(t, crs)
	kills("installs")
	wait()
	took := waitConverged(t, grace+60*time.Second, ns)
	t.Logf("installs: converged %s after the last restart", took.Round(time.Second))

	for r := 1; r <= 2; r++ {
		wait = edit(t, crs, r)
		kills("upgrades")
		wait()
		took = waitConverged(t, grace+60*time.Second, ns)
		t.Logf("upgrades %d: converged %s after the last restart", r, took.Round(time.Second))
	}

	op.Stop()
	freshWritesNothing(t, "killed-fresh", ns, scale(10*time.Second, 40*time.Second))
	if err := checker.Converged(t.Context(), ns); err != nil {
		t.Error(err)
	}
}
