package memlimit

import (
	"errors"
	"testing"
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
