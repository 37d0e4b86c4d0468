package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every LlamaStackDistribution of the samples, and of upstream's samples as
// the e2e suite applies them, converts to OGXServers that the API server's
// admission takes (schema and CEL of the OGXServer CRD) and that render; the
// other documents pass through unchanged.
func TestToOGXServerConvertsEverySample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "llamastack_*.yaml"))
	require.NoError(t, err)
	files = append(files, filepath.Join("..", "..", "test", "e2e", "upstream-samples", "00-install.yaml"), filepath.Join("..", "..", "test", "e2e", "upstream-docs", "00-install.yaml"))
	require.Greater(t, len(files), 6)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			converted, warnings, code := run(t, "--to-ogxserver", "-f", f)
			require.Equal(t, 0, code, warnings)
			assert.NotContains(t, converted, "kind: LlamaStackDistribution")
			assert.Contains(t, converted, "kind: OGXServer")
			in, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.Equal(t, strings.Count(string(in), "\nkind: ConfigMap"), strings.Count(converted, "\nkind: ConfigMap"), "other documents pass through")

			tmp := filepath.Join(t.TempDir(), "converted.yaml")
			require.NoError(t, os.WriteFile(tmp, []byte(converted), 0o600))
			out, errOut, code := run(t, "-f", tmp)
			require.Equal(t, 0, code, "the converted file renders: %s\n%s", errOut, converted)
			assert.Contains(t, out, "# OGXServer ")
		})
	}
}

// The conversion says what has no counterpart, in the file and on stderr,
// and refuses a file without LlamaStackDistributions.
func TestToOGXServerNotesAndErrors(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "llsd.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`apiVersion: llamastack.io/v1alpha1
kind: LlamaStackDistribution
metadata: {name: old, namespace: team-a}
spec:
  server:
    distribution: {name: ollama}
    containerSpec:
      envFrom: [{secretRef: {name: s}}]
    podOverrides: {terminationGracePeriodSeconds: 5}
`), 0o600))
	out, errOut, code := run(t, "--to-ogxserver", "--ogxserver-suffix", "-new", "-f", f)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "name: old-new\n")
	assert.Contains(t, out, "ogx.io/adopt-networking: old\n")
	assert.NotContains(t, out, "adopt-storage", "no storage, nothing to adopt")
	for _, field := range []string{"spec.server.distribution.name", "spec.server.containerSpec.envFrom", "spec.server.podOverrides.terminationGracePeriodSeconds"} {
		assert.Contains(t, out, "# "+field+": ")
		assert.Contains(t, errOut, "warning: LlamaStackDistribution old: "+field+": ")
	}

	plain := filepath.Join(dir, "cm.yaml")
	require.NoError(t, os.WriteFile(plain, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600))
	_, errOut, code = run(t, "--to-ogxserver", "-f", plain)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no LlamaStackDistribution")
}

// run runs a command line of render.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// Upstream's OGXServer samples and documented examples, as the kuttl suites
// apply them, render offline (admission by the CRD, the translation, the
// chart, the guard), but those whose configuration is read from a
// ConfigMap of their namespace at reconcile (spec.baseConfig), which an
// offline render cannot read.
func TestUpstreamOGXServersRenderOffline(t *testing.T) {
	for _, suite := range []string{"ogx-upstream-samples", "ogx-upstream-docs"} {
		f := filepath.Join("..", "..", "test", "e2e", suite, "00-install.yaml")
		out, errOut, code := run(t, "-f", f)
		require.Equal(t, 0, code, "%s: %s", suite, errOut)
		in, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, strings.Count(string(in), "kind: OGXServer\n"), strings.Count(out, "# OGXServer "), "%s: every OGXServer renders", suite)
	}
}

// Every sample renders at the oldest Kubernetes the CSV admits
// (minKubeVersion 1.30.0), and not below it (the charts' kubeVersion).
func TestSamplesRenderAtTheMinimumKubeVersion(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*_*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		_, errOut, code := renderFile(t, f, "--kube-version", "v1.30.0")
		assert.Equal(t, 0, code, "%s at 1.30: %s", filepath.Base(f), errOut)
	}
	_, errOut, code := renderFile(t, files[0], "--kube-version", "v1.29.0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "kubeVersion")
}
