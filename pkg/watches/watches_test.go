package watches

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDefaults(t *testing.T) {
	ws, err := Parse([]byte(`
- group: llamastack.io
  version: v1alpha1
  kind: LlamaStackDistribution
  chart: llama-stack-distribution
  reconcilePeriod: 10m
`))
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "llamastack.io/v1alpha1, Kind=LlamaStackDistribution", ws[0].GroupVersionKind().String())
	assert.Equal(t, 10*time.Minute, ws[0].Period())
	assert.Equal(t, min(4*runtime.GOMAXPROCS(0), 16), ws[0].MaxConcurrentReconciles)
	assert.Equal(t, 3, ws[0].MaxReleaseHistory)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", ``, "watches file lists no kind"},
		{"missing kind", `[{group: g, version: v1}]`, "watches entry 0: group, version and kind are required"},
		{"duplicate", `[{group: g, version: v1, kind: K, chart: c}, {group: g, version: v1, kind: K, chart: d}]`, "watches entry 1: g/v1, Kind=K is listed twice"},
		{"unknown field", `[{group: g, version: v1, kind: K, chart: c, charts: x}]`, `parse watches file: error unmarshaling JSON: while decoding JSON: json: unknown field "charts"`},
		{"negative", `[{group: g, version: v1, kind: K, chart: c, maxReleaseHistory: -1}]`, "watches entry 0 (K): maxConcurrentReconciles and maxReleaseHistory must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			assert.EqualError(t, err, tc.want)
		})
	}
}

// A file that is not there is an error that says so.
func TestMissingWatchesFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "read watches file: ")
}
