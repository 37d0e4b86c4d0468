package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fakeKind is a kind of ConfigMaps, for the generic parts' tests.
type fakeKind struct {
	meta     Meta
	prepared []string
}

type fakeInputs struct{ n int }

func (k *fakeKind) Meta() Meta { return k.meta }
func (k *fakeKind) Gather(_ context.Context, cm *corev1.ConfigMap) (*fakeInputs, error) {
	return &fakeInputs{n: len(cm.Data)}, nil
}
func (k *fakeKind) Values(cm *corev1.ConfigMap, in *fakeInputs) (map[string]any, error) {
	if in == nil {
		return map[string]any{"name": cm.Name}, nil
	}
	return map[string]any{"name": cm.Name, "n": in.n}, nil
}
func (k *fakeKind) Status(context.Context, *corev1.ConfigMap, *fakeInputs, Observation) error {
	return nil
}
func (k *fakeKind) Conditions(*corev1.ConfigMap) []metav1.Condition { return nil }

// preparingKind is a fakeKind that is a Preparer too.
type preparingKind struct{ fakeKind }

func (k *preparingKind) Prepare(_ context.Context, cm *corev1.ConfigMap, _ *fakeInputs) error {
	k.prepared = append(k.prepared, "prepare "+cm.Name)
	return nil
}
func (k *preparingKind) Cleanup(_ context.Context, cm *corev1.ConfigMap) error {
	k.prepared = append(k.prepared, "cleanup "+cm.Name)
	return nil
}

func testKind(optional ...schema.GroupVersionKind) Registered {
	return Register[*corev1.ConfigMap, *fakeInputs](&fakeKind{meta: Meta{
		GVK:          corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		NewObject:    func() client.Object { return &corev1.ConfigMap{} },
		NewList:      func() client.ObjectList { return &corev1.ConfigMapList{} },
		OptionalAPIs: optional,
	}})
}

func TestRegisteredPassesTypedObjectsAndInputs(t *testing.T) {
	k := testKind()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"x": "1", "y": "2"}}
	in, err := k.Gather(context.Background(), cm)
	require.NoError(t, err)
	vals, err := k.Values(cm, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "a", "n": 2}, vals)

	// Without inputs (Gather failed) the kind gets its zero inputs.
	vals, err = k.Values(cm, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "a"}, vals)

	// Optional hooks: absent ones do nothing, or say they are absent.
	require.NoError(t, k.Prepare(context.Background(), cm, in))
	require.NoError(t, k.Cleanup(context.Background(), cm))
	_, _, ok := k.ConfigMapReader()
	assert.False(t, ok)
	_, err = k.OfflineInputs(cm, NewCapabilities())
	assert.ErrorContains(t, err, "ConfigMap cannot be rendered offline")
}

func TestRegisteredCallsTheHooksAKindHas(t *testing.T) {
	pk := &preparingKind{fakeKind{meta: Meta{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	k := Register[*corev1.ConfigMap, *fakeInputs](pk)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	require.NoError(t, k.Prepare(context.Background(), cm, &fakeInputs{}))
	require.NoError(t, k.Cleanup(context.Background(), cm))
	assert.Equal(t, []string{"prepare a", "cleanup a"}, pk.prepared)
}

func TestManifestObjects(t *testing.T) {
	var c manifestCache
	got := c.objects("---\n# Source: a\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n# empty\n")
	assert.Equal(t, []ObjectRef{{Kind: "Deployment", Name: "d"}, {Kind: "Service", Name: "s"}}, got)
	assert.Equal(t, "d", Observation{Objects: got}.Find("Deployment"))
	assert.Equal(t, "", Observation{Objects: got}.Find("Route"))
}

// A manifest's list is remembered, and what a caller does with its copy does
// not change what the next caller gets.
func TestManifestObjectsAreRemembered(t *testing.T) {
	manifest := "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: remembered\n"
	var c manifestCache
	first := c.objects(manifest)
	first[0].Name = "changed by a caller"
	assert.Equal(t, []ObjectRef{{Kind: "Service", Name: "remembered"}}, c.objects(manifest))
	allocs := testing.AllocsPerRun(100, func() { c.objects(manifest) })
	assert.LessOrEqual(t, allocs, 2.0, "a remembered list is not parsed again")
	assert.Greater(t, testing.AllocsPerRun(10, func() { parseManifestObjects(manifest) }), 10.0, "parsing allocates more than a copy")
}
