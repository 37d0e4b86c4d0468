package memlimit

import (
	"context"
	"runtime/metrics"
	"time"
)

// The operator works in bursts (a shared ConfigMap edited reconciles every
// CR that reads it) and is idle in between. The runtime keeps the heap it
// grew to for a burst and returns it to the system only slowly, so an idle
// operator would hold its last burst's peak. ReleaseWhenIdle hands it back
// once the process has gone quiet: one forced collection per burst, and
// none while the operator is busy or idle, so bursts run at the runtime's own
// pace and an idle process spends nothing.
const (
	// IdleInterval is how often the heap is looked at, and how long the
	// process must have been quiet.
	IdleInterval = 10 * time.Second
	// IdleAllocated: allocating less than this in IdleInterval is quiet (a
	// metrics scrape allocates about 1 MiB).
	IdleAllocated = 4 << 20
	// IdleFree: releasing is worth a collection only when at least this
	// much of the heap is free and not yet returned.
	IdleFree = 1 << 20
)

// Sample is what the decision needs from the runtime.
type Sample struct {
	Allocated uint64 // bytes allocated since the start (cumulative)
	Free      uint64 // free heap not yet returned to the system
}

// Quiet says whether, between two samples one IdleInterval apart, the
// process was quiet and holds enough free heap to be worth releasing.
func Quiet(prev, cur Sample) bool {
	return cur.Allocated-prev.Allocated < IdleAllocated && cur.Free >= IdleFree
}

// Busy says whether the process allocated as much as a burst between two
// samples.
func Busy(prev, cur Sample) bool { return cur.Allocated-prev.Allocated >= IdleAllocated }

// ReleaseWhenIdle samples the heap every interval until ctx ends and calls
// release when Quiet says so: once after the start, then once after each
// busy stretch, so that the small allocations of an idle process (metrics
// scrapes, lease renewals) never cost a collection each.
func ReleaseWhenIdle(ctx context.Context, interval time.Duration, sample func() Sample, release func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	prev := sample()
	armed := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := sample()
		if Busy(prev, cur) {
			armed = true
		} else if armed && Quiet(prev, cur) {
			release()
			armed = false
			cur = sample()
		}
		prev = cur
	}
}

// RuntimeSample reads a Sample from runtime/metrics.
func RuntimeSample() Sample {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	var out Sample
	if s[0].Value.Kind() == metrics.KindUint64 {
		out.Allocated = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		out.Free = s[1].Value.Uint64()
	}
	return out
}
