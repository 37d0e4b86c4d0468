// Package memlimit holds the operator's Go runtime memory settings: the
// soft memory limit, derived from the container's memory limit, and the
// release of a burst's heap once the process is idle (ReleaseWhenIdle).
//
// A process near its cgroup's limit is killed by the kernel; with a soft
// limit below it the garbage collector works harder instead, which is what
// an operator under a burst of reconciles should do.
//
// The package is pure: it reads files through the function it is given, and
// the runtime through the functions ReleaseWhenIdle is given.
package memlimit

import (
	"strconv"
	"strings"
)

// Fraction of the container's limit the runtime aims below: the rest is room
// for what the Go heap does not count (the binary's pages, stacks, buffers).
const Fraction = 0.9

// Files that hold the memory limit: cgroup v2, then v1.
var Files = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// noLimitV1 is above any real limit: cgroup v1 reports "unlimited" as the
// largest page-aligned int64.
const noLimitV1 = 1 << 62

// Soft is the soft memory limit for a container whose limit one of Files
// holds (read through readFile), and false when there is none: no cgroup
// file, "max", or v1's unlimited value.
func Soft(readFile func(string) ([]byte, error)) (int64, bool) {
	for _, f := range Files {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noLimitV1 {
			return 0, false
		}
		return int64(float64(n) * Fraction), true
	}
	return 0, false
}
