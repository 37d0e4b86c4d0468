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
	assert.Equal(t, 1, ws[0].MaxConcurrentReconciles)
	assert.Equal(t, 3, ws[0].MaxReleaseHistory)
}

func TestParseErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":         ``,
		"missing chart": `[{group: g, version: v1, kind: K}]`,
		"duplicate":     `[{group: g, version: v1, kind: K, chart: c}, {group: g, version: v1, kind: K, chart: d}]`,
		"unknown field": `[{group: g, version: v1, kind: K, chart: c, charts: x}]`,
		"negative":      `[{group: g, version: v1, kind: K, chart: c, maxReleaseHistory: -1}]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(in))
			assert.Error(t, err)
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
	assert.NotEmpty(t, ws)
}
