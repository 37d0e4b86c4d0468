package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

const llsdWatch = `[{group: llamastack.io, version: v1alpha1, kind: LlamaStackDistribution, chart: llama-stack-distribution}]`

func TestCacheOptionsSelectOnlyTheOperatorsObjects(t *testing.T) {
	ws, err := watches.Parse([]byte(llsdWatch))
	require.NoError(t, err)
	opts, err := CacheOptions(ws, []string{"a", "b"})
	require.NoError(t, err)
	cached := map[string]bool{}
	for obj, by := range opts.ByObject {
		require.NotNil(t, by.Label, "%T must be cached by label", obj)
		assert.Equal(t, release.LabelManaged+"=true", by.Label.String(), "%T", obj)
		switch obj.(type) {
		case *corev1.Secret, *corev1.ConfigMap:
			t.Errorf("%T must not be cached with its data", obj)
		}
		cached[fmt.Sprintf("%T", obj)] = true
	}
	assert.Equal(t, typeNames(llamastack.Meta().OwnedTypes), cached, "every owned type, and nothing else, is cached by label")
	assert.Len(t, opts.DefaultNamespaces, 2)

	all, err := CacheOptions(ws, nil)
	require.NoError(t, err)
	assert.Nil(t, all.DefaultNamespaces, "no namespaces: watch all")
}

func TestKindForUnknownKind(t *testing.T) {
	w := watches.Watch{Group: "example.com", Version: "v1", Kind: "Nope", Chart: "x"}
	_, err := KindFor(w, Deps{})
	assert.EqualError(t, err, "the watches file lists example.com/v1, Kind=Nope, which this operator does not serve")
	_, err = MetaFor(w)
	assert.Error(t, err)
	_, err = CacheOptions([]watches.Watch{w}, nil)
	assert.Error(t, err)
}

// Every kind of the registry is in the scheme, and its meta is complete.
func TestRegistryKindsAreComplete(t *testing.T) {
	s := Scheme()
	for _, e := range rendered() {
		m := e.meta()
		assert.True(t, s.Recognizes(m.GVK), "%s is not in the scheme", m.GVK)
		assert.NotEmpty(t, m.ReleasePrefix, m.GVK.Kind)
		assert.NotEmpty(t, m.OwnedTypes, m.GVK.Kind)
		obj := m.NewObject()
		gvks, _, err := s.ObjectKinds(obj)
		require.NoError(t, err)
		assert.Contains(t, gvks, m.GVK, "NewObject is a %T", obj)
		_, _, err = s.ObjectKinds(m.NewList())
		require.NoError(t, err)
		built := e.new(Deps{}).Meta()
		assert.Equal(t, m.GVK, built.GVK, "the built kind describes itself as the registry does")
		assert.Equal(t, m.ReleasePrefix, built.ReleasePrefix)
		assert.Equal(t, typeNames(m.OwnedTypes), typeNames(built.OwnedTypes))
	}
}

// Without a watches file the operator renders every kind of its registry,
// each through its own chart, with the default settings; LMEvalJob has its
// own controller.
func TestWatchesDefaultToTheRegistry(t *testing.T) {
	ws, err := Watches("")
	require.NoError(t, err)
	require.Len(t, ws, 5)
	want := []struct{ gvk, chart string }{
		{"llamastack.io/v1alpha1, Kind=LlamaStackDistribution", "llama-stack-distribution"},
		{"ogx.io/v1beta1, Kind=OGXServer", "ogx-server"},
		{"trustyai.opendatahub.io/v1, Kind=TrustyAIService", "trustyai-service"},
		{"trustyai.opendatahub.io/v1alpha1, Kind=NemoGuardrails", "nemo-guardrails"},
		{"trustyai.opendatahub.io/v1, Kind=EvalHub", "eval-hub"},
	}
	for i, w := range ws {
		assert.Equal(t, want[i].gvk, w.GroupVersionKind().String(), "the storage version")
		assert.Equal(t, want[i].chart, w.Chart)
		assert.Equal(t, 10*time.Minute, w.Period())
		assert.Equal(t, 3, w.MaxReleaseHistory)
		assert.Equal(t, watches.DefaultConcurrency(), w.MaxConcurrentReconciles)
	}
	var kinds []string
	for _, k := range Served() {
		kinds = append(kinds, k.GVK.Kind)
	}
	assert.Equal(t, []string{"LlamaStackDistribution", "OGXServer", "TrustyAIService", "NemoGuardrails", "EvalHub", "LMEvalJob"}, kinds)
}

// A watches file lists the kinds to render and tunes them; each chart is
// the kind's own, so a file may leave it out and may not name another.
func TestAWatchesFileTunesTheKinds(t *testing.T) {
	write := func(s string) string {
		p := filepath.Join(t.TempDir(), "watches.yaml")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	ws, err := Watches(write(`[{group: ogx.io, version: v1beta1, kind: OGXServer, reconcilePeriod: 3s, maxReleaseHistory: 5}]`))
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "ogx-server", ws[0].Chart, "the kind's own chart")
	assert.Equal(t, 3*time.Second, ws[0].Period())
	assert.Equal(t, 5, ws[0].MaxReleaseHistory)

	_, err = Watches(write(`[{group: ogx.io, version: v1beta1, kind: OGXServer, chart: llama-stack-distribution}]`))
	assert.ErrorContains(t, err, "OGXServer is rendered by chart ogx-server, not llama-stack-distribution: leave chart out")
	_, err = Watches(write(`[{group: example.com, version: v1, kind: Nope}]`))
	assert.ErrorContains(t, err, "which this operator does not serve")
	_, err = Watches(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "read watches file")
}

func typeNames(objs []client.Object) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		out[fmt.Sprintf("%T", o)] = true
	}
	return out
}

// Without the operator's namespace there is nowhere to keep release
// records: the manager refuses to start, and says what to pass.
func TestManagerNeedsTheOperatorNamespace(t *testing.T) {
	ws, err := watches.Parse([]byte(llsdWatch))
	require.NoError(t, err)
	_, err = NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ManagerOptions{Watches: ws, MetricsAddr: "0", ProbeAddr: "0", SkipControllerNameValidation: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--operator-namespace or $POD_NAMESPACE")
}

// The cache keeps of a Deployment what status reads, and not its template.
func TestCachedDeploymentsAreSlim(t *testing.T) {
	ws, err := watches.Parse([]byte(llsdWatch))
	require.NoError(t, err)
	opts, err := CacheOptions(ws, nil)
	require.NoError(t, err)
	var transform func(any) (any, error)
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*appsv1.Deployment); ok {
			transform = by.Transform
		}
	}
	require.NotNil(t, transform, "Deployments have a transform")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 3, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable}}},
	}
	out, err := transform(d)
	require.NoError(t, err)
	got := out.(*appsv1.Deployment)
	assert.Empty(t, got.Spec.Template.Spec.Containers)
	assert.Empty(t, got.ManagedFields)
	assert.Equal(t, int64(3), got.Generation)
	assert.Equal(t, int32(2), *got.Spec.Replicas)
	assert.Equal(t, "b", got.Spec.Selector.MatchLabels["a"])
	assert.Equal(t, int32(2), got.Status.AvailableReplicas)
	assert.Len(t, got.Status.Conditions, 1)
}
