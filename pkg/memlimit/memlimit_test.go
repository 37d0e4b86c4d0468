package memlimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

func files(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := m[name]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}
}

func TestSoft(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"cgroup v2, 256 Mi", map[string]string{v2: "268435456\n"}, 241591910, true},
		{"cgroup v2 without a limit", map[string]string{v2: "max\n"}, 0, false},
		{"cgroup v1, 256 Mi", map[string]string{v1: "268435456\n"}, 241591910, true},
		{"cgroup v1 without a limit", map[string]string{v1: "9223372036854771712\n"}, 0, false},
		{"v2 wins over v1", map[string]string{v2: "1000", v1: "2000"}, 900, true},
		{"no cgroup", nil, 0, false},
		{"garbage", map[string]string{v2: "lots"}, 0, false},
		{"zero", map[string]string{v2: "0"}, 0, false},
	} {
		got, ok := Soft(files(tc.files))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Soft = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestQuiet(t *testing.T) {
	for _, c := range []struct {
		name      string
		prev, cur Sample
		want      bool
	}{
		{"busy: much allocated", Sample{Allocated: 100 << 20}, Sample{Allocated: 200 << 20, Free: 50 << 20}, false},
		{"quiet with free heap", Sample{Allocated: 100 << 20}, Sample{Allocated: 101 << 20, Free: 20 << 20}, true},
		{"quiet, nothing worth returning", Sample{Allocated: 100 << 20}, Sample{Allocated: 100 << 20, Free: IdleFree - 1}, false},
		{"a scrape's allocation is still quiet", Sample{Allocated: 100 << 20}, Sample{Allocated: 100<<20 + IdleAllocated - 1, Free: IdleFree}, true},
		{"at the allocation bound: busy", Sample{Allocated: 100 << 20}, Sample{Allocated: 100<<20 + IdleAllocated, Free: IdleFree}, false},
	} {
		if got := Quiet(c.prev, c.cur); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A burst, then quiet: one release; none while busy, none again while idle
// however much the scrapes leave free, one after the next burst.
func TestReleaseWhenIdle(t *testing.T) {
	samples := []Sample{
		{Allocated: 0, Free: 0},               // 0 start
		{Allocated: 50 << 20, Free: 8 << 20},  // 1 busy
		{Allocated: 90 << 20, Free: 9 << 20},  // 2 busy
		{Allocated: 91 << 20, Free: 9 << 20},  // 3 quiet: release
		{Allocated: 91 << 20, Free: 0},        // 4 after the release
		{Allocated: 92 << 20, Free: 2 << 20},  // 5 quiet, a scrape left 2 MiB free: no release
		{Allocated: 93 << 20, Free: 2 << 20},  // 6 the same
		{Allocated: 200 << 20, Free: 9 << 20}, // 7 busy again
		{Allocated: 201 << 20, Free: 9 << 20}, // 8 quiet: release
		{Allocated: 201 << 20, Free: 0},       // 9 after the release
		{Allocated: 201 << 20, Free: 0},       // 10
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	i := 0
	var after []int
	next := func() Sample {
		s := samples[i]
		if i < len(samples)-1 {
			i++
		} else {
			cancel()
		}
		return s
	}
	ReleaseWhenIdle(ctx, time.Millisecond, next, func() { after = append(after, i-1) })
	if len(after) != 2 || after[0] != 3 || after[1] != 8 {
		t.Fatalf("released after samples %v, want after 3 and 8", after)
	}
}

func TestRuntimeSample(t *testing.T) {
	before := RuntimeSample()
	buf := make([][]byte, 0, 64)
	for j := 0; j < 64; j++ {
		buf = append(buf, make([]byte, 64<<10))
	}
	after := RuntimeSample()
	if after.Allocated-before.Allocated < 4<<20 {
		t.Fatalf("allocated %d bytes between samples, want at least 4 MiB (%d buffers)", after.Allocated-before.Allocated, len(buf))
	}
}
