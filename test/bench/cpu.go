package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// cpuTimes are the CPU seconds (user + system) the bench's descendants
// have used, by command name (kube-apiserver, etcd, manager).
type cpuTimes map[string]float64

// descendantsCPU reads /proc for the processes below this one.
func descendantsCPU() (cpuTimes, error) {
	type proc struct {
		ppid int
		comm string
		cpu  float64
	}
	procs := map[int]proc{}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ... utime stime: comm may hold spaces and
		// parentheses, so the fields count from its closing one.
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		procs[pid] = proc{ppid: ppid, comm: s[open+1 : closing], cpu: (utime + stime) / clockTicks}
	}
	self := os.Getpid()
	out := cpuTimes{}
	for pid, p := range procs {
		for a, hops := p.ppid, 0; a > 1 && hops < 32; a, hops = procs[a].ppid, hops+1 {
			if a == self {
				out[p.comm] += procs[pid].cpu
				break
			}
		}
	}
	return out, nil
}

// since is the CPU each command used from before to t.
func (t cpuTimes) since(before cpuTimes) cpuTimes {
	out := cpuTimes{}
	for k, v := range t {
		out[k] = v - before[k]
	}
	return out
}

// describe prints the operator's, the API server's and etcd's CPU seconds.
func (t cpuTimes) describe() string {
	return fmt.Sprintf("operator %.2f s, kube-apiserver %.2f s, etcd %.2f s", t["manager"], t["kube-apiserver"], t["etcd"])
}
