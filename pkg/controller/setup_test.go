package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

func TestCacheOptionsSelectOnlyTheOperatorsObjects(t *testing.T) {
	ws, err := watches.Parse([]byte(`[{group: llamastack.io, version: v1alpha1, kind: LlamaStackDistribution, chart: llama-stack-distribution}]`))
	require.NoError(t, err)
	opts, err := CacheOptions(ws, []string{"a", "b"})
	require.NoError(t, err)
	require.Len(t, opts.ByObject, 8)
	for obj, by := range opts.ByObject {
		require.NotNil(t, by.Label, "%T must be cached by label", obj)
		assert.Equal(t, LabelManaged+"=true", by.Label.String(), "%T", obj)
		switch obj.(type) {
		case *corev1.Secret, *corev1.ConfigMap:
			t.Errorf("%T must not be cached with its data", obj)
		}
	}
	assert.Len(t, opts.DefaultNamespaces, 2)

	all, err := CacheOptions(ws, nil)
	require.NoError(t, err)
	assert.Nil(t, all.DefaultNamespaces, "no namespaces: watch all")
}

func TestKindForUnknownKind(t *testing.T) {
	_, err := KindFor(watches.Watch{Group: "example.com", Version: "v1", Kind: "Nope", Chart: "x"}, KindDeps{})
	assert.ErrorContains(t, err, "does not serve")
}

func TestManifestObjects(t *testing.T) {
	got := manifestObjects("---\n# Source: a\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n# empty\n")
	assert.Equal(t, []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}, {APIVersion: "v1", Kind: "Service", Name: "s"}}, got)
	assert.Equal(t, "d", Observation{Objects: got}.Find("Deployment"))
	assert.Equal(t, "", Observation{Objects: got}.Find("Route"))
}

// Without the operator's namespace there is nowhere to keep release
// records: the manager refuses to start, and says what to pass.
func TestManagerNeedsTheOperatorNamespace(t *testing.T) {
	ws, err := watches.Parse([]byte(`[{group: llamastack.io, version: v1alpha1, kind: LlamaStackDistribution, chart: llama-stack-distribution}]`))
	require.NoError(t, err)
	_, err = NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ManagerOptions{Watches: ws, MetricsAddr: "0", ProbeAddr: "0", SkipControllerNameValidation: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--operator-namespace or $POD_NAMESPACE")
}
