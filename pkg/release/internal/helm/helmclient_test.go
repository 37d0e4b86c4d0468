package helm

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// The gate writes, for the same manifest, byte for byte what the gate of the
// operator on Helm 3 wrote, which its stored releases hold
// (testdata/gated.yaml, written by it): the owner reference on namespaced
// objects, none on the kept ones, owner annotations on a cluster-scoped one.
// A release stored before the change then reads the same.
func TestGateWritesWhatTheHelm3GateWrote(t *testing.T) {
	golden, err := os.ReadFile("../../../../cmd/render/testdata/golden/all-features.monitoring.yaml")
	require.NoError(t, err)
	manifest := string(golden) + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything-reader\n"
	want, err := os.ReadFile("testdata/gated.yaml")
	require.NoError(t, err)

	ownerKind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Owner"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(ownerKind, meta.RESTScopeNamespace)
	var kinds []schema.GroupKind
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var head metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head))
		if head.Kind == "" {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(head.APIVersion, head.Kind)
		scope := meta.RESTScopeNamespace
		if head.Kind == "ClusterRole" {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(gvk, scope)
		kinds = append(kinds, gvk.GroupKind())
	}
	require.Greater(t, len(kinds), 6, "the manifest has the chart's kinds")

	owner := &unstructured.Unstructured{}
	owner.SetGroupVersionKind(ownerKind)
	owner.SetNamespace("team-c")
	owner.SetName("everything")
	owner.SetUID("uid-1")

	// Nothing exists yet: every read of the ownership check is a 404.
	k := &Kube{Dynamic: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), Mapper: mapper, Namespace: "team-c"}
	g := &Gate{
		Kube:      k,
		Policy:    guard.Policy{Namespace: "team-c", Kinds: kinds, ClusterScoped: []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}}},
		Ownership: guard.Ownership{Label: "ai-stack-operator.io/managed", Release: "everything", Owner: ownerKind.GroupKind(), Namespace: "team-c", Name: "everything"},
		Owner:     owner,
		OwnerKind: ownerKind,
	}
	got, err := g.Run(context.Background(), manifest)
	require.NoError(t, err)
	assert.Equal(t, string(want), got.Manifest)
	assert.Contains(t, got.Manifest, "uid: uid-1", "owner references are set")
	assert.Contains(t, got.Manifest, "operator-sdk/primary-resource: team-c/everything", "the cluster-scoped object carries the owner annotations")
	assert.Len(t, got.Objects, len(kinds), "every object, with its live state (none)")

	// And it still refuses what the policy refuses, before any output.
	g.Policy.Namespace = "team-d"
	_, err = g.Run(context.Background(), manifest)
	var v *guard.Violation
	require.ErrorAs(t, err, &v)
	assert.Contains(t, v.Error(), `outside the CR's namespace "team-d"`)
}
