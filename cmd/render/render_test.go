package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// renderFile runs `render` on a file, from the repository root's point of view.
func renderFile(t *testing.T, file string, extra ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"-f", file}, extra...)
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestGolden pins the manifests rendered for each sample and test CR.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*_*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("testdata", "*.cr.yaml"))
	require.NoError(t, err)
	inputs = append(inputs, more...)
	require.NotEmpty(t, inputs)

	type variant struct {
		suffix string
		flags  []string
	}
	for _, in := range inputs {
		for _, v := range []variant{{"", nil}, {".openshift", []string{"--openshift"}}, {".monitoring", []string{"--api-versions", "monitoring.coreos.com/v1"}}, {".openshift-monitoring", []string{"--openshift", "--api-versions", "monitoring.coreos.com/v1"}}, {".settings", []string{"--openshift", "--settings", filepath.Join("testdata", "settings.yaml")}}} {
			base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(in), ".yaml"), ".cr")
			golden := filepath.Join("testdata", "golden", base+v.suffix+".yaml")
			t.Run(base+v.suffix, func(t *testing.T) {
				out, errOut, code := renderFile(t, in, v.flags...)
				require.Equal(t, 0, code, errOut)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
					require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "run `make update-golden` to create it")
				assert.Equal(t, string(want), out, "rendered output changed; review and run `make update-golden`")

				again, _, _ := renderFile(t, in, v.flags...)
				assert.Equal(t, out, again, "rendering must be deterministic")
			})
		}
	}
}

func TestRenderPrintsDeploymentAndService(t *testing.T) {
	out, errOut, code := renderFile(t, filepath.Join("testdata", "minimal.cr.yaml"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "kind: Deployment\nmetadata:\n  name: \"minimal\"\n")
	assert.Contains(t, out, "kind: Service\nmetadata:\n  name: \"minimal-service\"\n")
	assert.Contains(t, out, "replicas: 1\n", "CRD defaults apply offline as on the server")
	assert.NotContains(t, out, "PersistentVolumeClaim")
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	tests := []struct {
		name, content, want string
	}{
		{"unknown distribution", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: nope}}}\n", "spec.server.distribution.name: unknown distribution \"nope\"; valid names:"},
		{"unknown kind only", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "the input holds no CR of a kind this operator serves (1 documents read)"},
		{"unknown field", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: starter}, nope: 1}}\n", "unknown field"},
		{"no name", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nspec: {server: {distribution: {name: starter}}}\n", "metadata.name is required"},
		{"empty", "", "the input holds no CR"},
		{"CEL rule", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: starter, image: quay.io/x:1}}}\n", "the API server would refuse it: spec.server.distribution: Invalid value: set exactly one of spec.server.distribution.name"},
		{"CEL rule across fields", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: starter}, autoscaling: {minReplicas: 5, maxReplicas: 2}}}\n", "spec.server.autoscaling: Invalid value: spec.server.autoscaling.minReplicas must not exceed maxReplicas"},
		{"schema pattern", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: starter}, containerSpec: {name: \"x\\n---\\nkind: Secret\"}}}\n", "the API server would refuse it: spec.server.containerSpec.name: Invalid value:"},
		{"schema minimum", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {replicas: -1, server: {distribution: {name: starter}}}\n", "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"},
		{"invalid CR name", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: Not_Valid}\nspec: {server: {distribution: {name: starter}}}\n", "metadata.name: Invalid value: \"Not_Valid\""},
		{"run config error", "apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x}\nspec: {server: {distribution: {name: starter}, config: {providers: {inference: [{providerId: a, providerType: remote::vllm}]}, models: [{modelId: m, providerId: nope}]}}}\n", "spec.server.config.models[0].providerId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := renderFile(t, write(strings.ReplaceAll(tt.name, " ", "-")+".yaml", tt.content))
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, tt.want)
		})
	}

	var out, errOut bytes.Buffer
	assert.Equal(t, 2, Main(nil, strings.NewReader(""), &out, &errOut), "render without -f is a usage error")
	assert.Contains(t, errOut.String(), "render needs -f FILE")
	assert.Equal(t, 2, Main([]string{"-f", "x.yaml", "extra"}, strings.NewReader(""), &out, &errOut), "an argument besides -f is a usage error")
	assert.Equal(t, 0, Main([]string{"-h"}, strings.NewReader(""), &out, &errOut), "-h prints the flags")
}
