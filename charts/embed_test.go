package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"maps"
)

func TestLoad(t *testing.T) {
	c, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	assert.Equal(t, "llama-stack-distribution", c.Name())
	assert.Len(t, c.Digest, 64)
	again, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	assert.Equal(t, c.Digest, again.Digest, "the digest must be stable")

	_, err = Load("no-such-chart")
	assert.ErrorContains(t, err, "not embedded")
}

// The chart renders with its own defaults, as `helm template` would.
func TestChartDefaultsRender(t *testing.T) {
	c, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, nil, render.Options{ReleaseName: "plain", Namespace: "default"})
	require.NoError(t, err)
	assert.Contains(t, out, "kind: Deployment\nmetadata:\n  name: \"plain\"\n")
	assert.Contains(t, out, "name: \"plain-service\"")
	assert.Contains(t, out, "name: \"plain-sa\"")
	assert.Contains(t, out, `app.kubernetes.io/managed-by: "Helm"`)
	assert.NotContains(t, out, "ai-stack-operator.io/managed")
	assert.NotContains(t, out, "PersistentVolumeClaim")

	withStorage, err := render.Render(c.Chart, map[string]any{"storage": map[string]any{"enabled": true}}, render.Options{ReleaseName: "plain", Namespace: "default"})
	require.NoError(t, err)
	assert.Contains(t, withStorage, "kind: PersistentVolumeClaim\nmetadata:\n  name: \"plain-pvc\"\n")
	assert.Contains(t, withStorage, "type: Recreate")
}

// values.schema.json rejects values that would render nonsense.
func TestChartSchemaRejectsBadValues(t *testing.T) {
	c, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	for name, vals := range map[string]map[string]any{
		"negative replicas": {"replicas": -1},
		"port out of range": {"container": map[string]any{"name": "x", "port": 70000}},
		"unknown value":     {"nope": true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "x", Namespace: "default"})
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), "schema"), err.Error())
		})
	}
}

// Long names are cut to valid DNS labels with a hash, and stay distinct.
func TestChartLongNames(t *testing.T) {
	c, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	name := strings.Repeat("n", 80)
	a, err := render.Render(c.Chart, map[string]any{"name": name + "a"}, render.Options{ReleaseName: "x", Namespace: "default"})
	require.NoError(t, err)
	b, err := render.Render(c.Chart, map[string]any{"name": name + "b"}, render.Options{ReleaseName: "x", Namespace: "default"})
	require.NoError(t, err)
	for _, line := range strings.Split(a, "\n") {
		if strings.HasPrefix(line, "  name: ") && strings.HasSuffix(line, "-service") {
			assert.LessOrEqual(t, len(strings.TrimPrefix(line, "  name: ")), 63, line)
		}
	}
	assert.NotEqual(t, a, b)
}

// Every kind the chart renders, with every switch on, is one it declares.
func TestChartDeclaresEveryKindItRenders(t *testing.T) {
	vals := map[string]any{
		"storage":             map[string]any{"enabled": true},
		"runConfig":           "version: 2\n",
		"autoscaling":         map[string]any{"maxReplicas": 3},
		"podDisruptionBudget": map[string]any{"maxUnavailable": 1},
		"expose":              map[string]any{"enabled": true},
		"trust":               map[string]any{"serviceCA": true, "clusterTrustedCA": true},
	}
	var sets []map[string]any
	vals["anyuid"] = map[string]any{"enabled": true}
	for _, caps := range []map[string]any{{"route": false, "serviceMonitor": true}, {"route": true, "serviceMonitor": false, "openshift": true}} {
		v := maps.Clone(vals)
		v["capabilities"] = caps
		sets = append(sets, v)
	}
	declaresWhatItRenders(t, "llama-stack-distribution", sets...)
}

// declaresWhatItRenders renders the chart with each set of values and checks
// that every kind it declares is rendered by one of them, and every kind
// rendered is declared (the guard refuses the others).
func declaresWhatItRenders(t *testing.T, chart string, sets ...map[string]any) {
	t.Helper()
	c, err := Load(chart)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, vals := range sets {
		out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "all", Namespace: "ns"})
		require.NoError(t, err)
		objs, err := guard.Check(out, guard.Policy{Namespace: "ns", Kinds: c.Kinds})
		require.NoError(t, err)
		for _, o := range objs {
			seen[o.GroupKind().String()] = true
		}
	}
	for _, k := range c.Kinds {
		assert.True(t, seen[k.String()], "declared kind %s is never rendered: drop it from %s", k, AnnotationKinds)
	}
}
