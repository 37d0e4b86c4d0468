package argocd

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
)

var update = flag.Bool("update", false, "rewrite the generated Argo CD snippets")

// root is config/argocd.
var root = filepath.Join("..", "..", "config", "argocd")

// healthTests is Argo CD's health_test.yaml.
type healthTests struct {
	Tests []struct {
		HealthStatus Health `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// Every testdata object of every check gives the health its health_test.yaml
// says, the way Argo CD's own tests of resource_customizations run them: with
// open libraries, and without (as argocd-cm scripts run unless
// resource.customizations.useOpenLibs is set).
func TestHealthChecks(t *testing.T) {
	checks, err := Load(root)
	require.NoError(t, err)
	kinds := map[string]bool{}
	for _, c := range checks {
		kinds[c.Key()] = true
		b, err := os.ReadFile(filepath.Join(c.Dir, "health_test.yaml"))
		require.NoError(t, err, "every check has its health_test.yaml")
		var tests healthTests
		require.NoError(t, yaml.UnmarshalStrict(b, &tests))
		require.NotEmpty(t, tests.Tests)
		used := map[string]bool{}
		for _, tc := range tests.Tests {
			used[filepath.Clean(tc.InputPath)] = true
			for _, openLibs := range []bool{false, true} {
				name := c.Key() + "/" + tc.InputPath
				if openLibs {
					name += "/open-libs"
				}
				t.Run(name, func(t *testing.T) {
					b, err := os.ReadFile(filepath.Join(c.Dir, tc.InputPath))
					require.NoError(t, err)
					obj := map[string]any{}
					require.NoError(t, yaml.Unmarshal(b, &obj))
					got, err := Evaluate(c.Script, obj, openLibs)
					require.NoError(t, err)
					assert.Equal(t, tc.HealthStatus, got)
				})
			}
		}
		data, err := filepath.Glob(filepath.Join(c.Dir, "testdata", "*.yaml"))
		require.NoError(t, err)
		for _, f := range data {
			rel, _ := filepath.Rel(c.Dir, f)
			assert.True(t, used[rel], "%s: %s is in no test", c.Key(), rel)
		}
	}
	served := map[string]bool{}
	for _, k := range operator.Served() {
		served[k.GVK.Group+"_"+k.GVK.Kind] = true
	}
	require.Len(t, served, len(operator.Served()))
	// Besides them, OLM v1's kinds that config/gitops/operator-olmv1 applies
	// (Argo CD has no check of its own for them).
	for _, k := range []string{"olm.operatorframework.io_ClusterCatalog", "olm.operatorframework.io_ClusterExtension"} {
		assert.True(t, kinds[k], "a check for %s", k)
		delete(kinds, k)
	}
	assert.Equal(t, served, kinds, "a check for every kind the operator serves (its registry)")
}

func TestEvaluateIsArgoCDs(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"generation": int64(2)}, "status": map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}}}
	h, err := Evaluate(`return {status = "Healthy", message = tostring(obj.metadata.generation) .. obj.status.conditions[1].type}`, obj, false)
	require.NoError(t, err)
	assert.Equal(t, Health{Status: "Healthy", Message: "2Ready"}, h, "obj is the global, arrays are 1-based")

	_, err = Evaluate(`return {status = "Healthy", message = string.upper("x")}`, obj, false)
	assert.Error(t, err, "no string library without open libraries")
	_, err = Evaluate(`return {status = "Healthy", message = string.upper("x")}`, obj, true)
	assert.NoError(t, err)

	_, err = Evaluate(`return {status = "Fine"}`, obj, false)
	assert.ErrorContains(t, err, `status "Fine"`)
	_, err = Evaluate(`return "Healthy"`, obj, false)
	assert.ErrorContains(t, err, "not a table")

	start := time.Now()
	_, err = Evaluate(`while true do end`, obj, false)
	assert.Error(t, err, "a script that never ends is stopped")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// The argocd-cm and OpenShift GitOps snippets are generated from the same
// scripts: `make argocd` rewrites them, and this test fails when they are stale.
func TestSnippetsUpToDate(t *testing.T) {
	checks, err := Load(root)
	require.NoError(t, err)
	for file, gen := range map[string]func([]Check) ([]byte, error){
		"argocd-cm-patch.yaml":        ConfigMapPatch,
		"openshift-gitops-patch.yaml": OpenShiftGitOpsPatch,
	} {
		want, err := gen(checks)
		require.NoError(t, err)
		want = append(want, '\n')
		path := filepath.Join(root, file)
		if *update {
			require.NoError(t, os.WriteFile(path, want, 0o644))
		}
		have, err := os.ReadFile(path)
		require.NoError(t, err, "run `make argocd`")
		assert.Equal(t, string(want), string(have), "%s is stale: run `make argocd`", file)
		for _, c := range checks {
			assert.Contains(t, string(have), strings.Split(c.Script, "\n")[0], "%s carries %s's script", file, c.Key())
		}
	}
	// The snippets parse and carry the scripts byte for byte.
	b, err := os.ReadFile(filepath.Join(root, "argocd-cm-patch.yaml"))
	require.NoError(t, err)
	cm := struct {
		Data map[string]string `json:"data"`
	}{}
	require.NoError(t, yaml.Unmarshal(b, &cm))
	for _, c := range checks {
		assert.Equal(t, c.Script, cm.Data["resource.customizations.health."+c.Key()])
	}
}
