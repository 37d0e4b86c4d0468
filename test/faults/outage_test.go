package faults

import (
	"net/url"
	"testing"
	"time"

	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
)

// The operator, with leader election on and its default timing, reaches the
// API server through a proxy that first cuts every connection for a while
// (15 s; 30 s in full runs) during a batch of installs, then holds every
// response for 500 ms during upgrades; then the API server itself restarts
// (same etcd) during upgrades: killed, so that its start-up is the outage;
// in full runs also gracefully, which takes longer than the renew deadline. The process stays up through each (the renew
// deadline outlasts the outage) and every CR converges; after the graceful
// restart the leader has ended its process by design, and started again it
// converges.
func TestAPIServerOutages(t *testing.T) {
	u, err := url.Parse(cluster.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := chaos.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ns := newNamespace(t, "outage")
	crs := batch(ns, scale(8, 40))
	op := runOperator(t, "outage-op", kubeconfigVia(t, "outage-op", proxy.Addr()), "--leader-elect")
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}

	// Connections cut during installs.
	wait := create(t, crs)
	time.Sleep(time.Second)
	outage := scale(10*time.Second, 30*time.Second)
	proxy.Drop(outage)
	t.Logf("every connection cut for %s", outage)
	time.Sleep(outage)
	wait()
	mustRun(t, op, "during the outage")
	took := waitConverged(t, grace+2*time.Minute, ns)
	t.Logf("converged %s after the outage", took.Round(time.Second))
	mustRun(t, op, "after the outage")

	// Every response 500 ms late during upgrades.
	proxy.SetDelay(500 * time.Millisecond)
	edit(t, crs, 1)()
	took = waitConverged(t, scale(5*time.Minute, 10*time.Minute), ns)
	proxy.SetDelay(0)
	t.Logf("upgrades with every response 500 ms late: converged in %s", took.Round(time.Second))
	mustRun(t, op, "with slow responses")

	// The API server crashes and restarts during upgrades.
	edit(t, crs, 2)()
	start := time.Now()
	if err := cluster.RestartAPIServer(true); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server killed and started again in %s", time.Since(start).Round(time.Millisecond))
	took = waitConverged(t, grace+2*time.Minute, ns)
	t.Logf("converged %s after the restart", took.Round(time.Second))
	mustRun(t, op, "after the API server restarted")

	if !full {
		return
	}
	// A graceful restart takes about a minute here, longer than the renew
	// deadline: the leader ends its process, by design, and the process
	// started again (as the kubelet would) converges.
	edit(t, crs, 3)()
	start = time.Now()
	if err := cluster.RestartAPIServer(false); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server restarted gracefully in %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(5 * time.Second)
	if done, err := op.Exited(); done {
		t.Logf("the operator ended its process (%v); starting it again", err)
		if err := op.Start(); err != nil {
			t.Fatal(err)
		}
	}
	took = waitConverged(t, grace+2*time.Minute, ns)
	t.Logf("converged %s after the graceful restart", took.Round(time.Second))
}
