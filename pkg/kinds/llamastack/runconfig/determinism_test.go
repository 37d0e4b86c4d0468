package runconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// TestRenderDeterministic renders the same config many times: the bytes must
// not change (Go randomizes map iteration on every range).
func TestRenderDeterministic(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "full.input.yaml"))
	require.NoError(t, err)
	cfg := parseConfig(t, string(src))
	first, err := Render(cfg, defaultOpts)
	require.NoError(t, err)
	for range 50 {
		again, err := Render(cfg, defaultOpts)
		require.NoError(t, err)
		require.Equal(t, string(first), string(again))
	}
}

// TestRenderIgnoresInputKeyOrder renders free-form objects whose keys come in
// different orders: the output must be the same.
func TestRenderIgnoresInputKeyOrder(t *testing.T) {
	build := func(config, meta, overrides string) *v1alpha1.ServerConfig {
		c := ollama()
		c.Providers.Inference[0].Config = rawJSON(config)
		c.Models = []v1alpha1.Model{{ModelID: "e", ModelType: "embedding", Metadata: rawJSON(meta)}}
		c.Overrides = rawJSON(overrides)
		return c
	}
	a, err := Render(build(
		`{"url":"u","api_token":"${env.T}","nested":{"z":1,"a":2,"m":{"y":true,"b":false}}}`,
		`{"embedding_dimension":384,"context_length":512}`,
		`{"telemetry":{"enabled":true},"logging":{"category_levels":{"server":"debug","core":"info"}},"apis":["inference"]}`,
	), defaultOpts)
	require.NoError(t, err)
	b, err := Render(build(
		`{"nested":{"m":{"b":false,"y":true},"a":2,"z":1},"api_token":"${env.T}","url":"u"}`,
		`{"context_length":512,"embedding_dimension":384}`,
		`{"apis":["inference"],"logging":{"category_levels":{"core":"info","server":"debug"}},"telemetry":{"enabled":true}}`,
	), defaultOpts)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.Contains(t, string(a), "      config:\n        api_token: ${env.T}\n        nested:\n          a: 2\n")
}
