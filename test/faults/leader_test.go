package faults

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
)

// Two replicas with leader election; the leader is SIGKILLed during a batch
// of installs (so it does not step down). The other takes over once the
// lease runs out, finishes the batch, and the two together write within 10%
// of what one replica writes for the same batch (25% in the shortened run).
func TestLeaderChange(t *testing.T) {
	rng := seed(t)
	n := scale(16, 60)
	// Shortened: a 15 s lease; full runs use the shipped timing.
	timing := scale([]string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}, nil)
	lease := scale(15*time.Second, 60*time.Second)
	args := append([]string{"--leader-elect"}, timing...)

	// One replica alone: the writes a batch costs.
	solo := runOperator(t, "leader-solo", "", args...)
	if err := solo.Start(); err != nil {
		t.Fatal(err)
	}
	base := newNamespace(t, "leader-solo")
	create(t, batch(base, n))()
	waitConverged(t, 3*time.Minute, base)
	solo.Stop() // steps down: the lease is free at once
	single := writesBy(t, "leader-solo", "")
	t.Logf("one replica: %d writes for %d CRs", single, n)

	// Two replicas; the one that writes first leads.
	replicas := map[string]*chaos.Operator{"leader-a": runOperator(t, "leader-a", "", args...), "leader-b": runOperator(t, "leader-b", "", args...)}
	for _, o := range replicas {
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
	}
	ns := newNamespace(t, "leader-change")
	wait := create(t, batch(ns, n))
	var leader, other string
	deadline := time.Now().Add(lease + time.Minute)
	for leader == "" && time.Now().Before(deadline) {
		for user := range replicas {
			if writesBy(t, user, ns) > 0 {
				leader = user
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if leader == "" {
		t.Fatal("no replica wrote anything")
	}
	for user := range replicas {
		if user != leader {
			other = user
		}
	}
	time.Sleep(time.Duration(rng.Int63n(int64(2 * time.Second))))
	replicas[leader].Kill()
	killed := time.Now()
	t.Logf("%s led and was killed after %d writes", leader, writesBy(t, leader, ""))
	wait()

	var took time.Duration
	for took == 0 && time.Since(killed) < lease+time.Minute {
		ws, err := chaos.Writes(cluster.AuditLog, other)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.At.After(killed) {
				took = w.At.Sub(killed)
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if took == 0 {
		t.Fatalf("%s did not take over within %s of the kill", other, lease+time.Minute)
	}
	t.Logf("%s took over %s after the kill (lease %s)", other, took.Round(100*time.Millisecond), lease)
	if took > lease+10*time.Second {
		t.Errorf("took over after %s, the lease is %s", took, lease)
	}
	waitConverged(t, grace+2*time.Minute, ns)
	total := writesBy(t, leader, "") + writesBy(t, other, "")
	ratio := float64(total) / float64(single)
	t.Logf("two replicas and a leader change: %d writes (%.3fx one replica's)", total, ratio)
	t.Logf("one replica's writes: %s", byResource(t, "leader-solo"))
	t.Logf("the two replicas' writes: %s and %s", byResource(t, leader), byResource(t, other))
	// Status writes and events follow the pods' timing, so batches differ by
	// a few writes per CR: the 10% target holds for the full run's 60 CRs;
	// the shortened run's 16 get a generous bound.
	if bound := scale(0.25, 0.10); math.Abs(ratio-1) > bound {
		t.Errorf("%d writes with a leader change, %d by one replica: more than %.0f%% apart", total, single, 100*bound)
	}
}

// byResource is a user's writes by verb and resource.
func byResource(t *testing.T, user string) string {
	t.Helper()
	ws, err := chaos.Writes(cluster.AuditLog, user)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, w := range ws {
		n[w.Verb+" "+w.Resource]++
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
