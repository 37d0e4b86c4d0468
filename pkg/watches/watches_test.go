package watches

import (
	"os"
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
		{"missing chart", `[{group: g, version: v1, kind: K}]`, "watches entry 0: group, version, kind and chart are required"},
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

// The repository's own watches.yaml must load.
func TestRepositoryWatchesFile(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "watches.yaml")
	_, err := os.Stat(path)
	require.NoError(t, err)
	ws, err := Load(path)
	require.NoError(t, err)
	require.Len(t, ws, 5)
	assert.Equal(t, "llamastack.io/v1alpha1, Kind=LlamaStackDistribution", ws[0].GroupVersionKind().String())
	assert.Equal(t, "llama-stack-distribution", ws[0].Chart)
	assert.Equal(t, "ogx.io/v1beta1, Kind=OGXServer", ws[1].GroupVersionKind().String())
	assert.Equal(t, "ogx-server", ws[1].Chart)
	assert.Equal(t, "trustyai.opendatahub.io/v1, Kind=TrustyAIService", ws[2].GroupVersionKind().String(), "the storage version")
	assert.Equal(t, "trustyai-service", ws[2].Chart)
	assert.Equal(t, "trustyai.opendatahub.io/v1alpha1, Kind=NemoGuardrails", ws[3].GroupVersionKind().String())
	assert.Equal(t, "nemo-guardrails", ws[3].Chart)
	assert.Equal(t, "trustyai.opendatahub.io/v1, Kind=EvalHub", ws[4].GroupVersionKind().String(), "the storage version")
	assert.Equal(t, "eval-hub", ws[4].Chart)
	for _, w := range ws {
		assert.Equal(t, 10*time.Minute, w.Period())
		assert.Equal(t, 3, w.MaxReleaseHistory)
	}

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "read watches file: ")
}
