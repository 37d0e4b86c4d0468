package helm

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// The gate writes what helm-operator-plugins' default post-renderer, which it
// replaces, wrote for the same manifest, byte for byte: the owner reference
// on namespaced objects, none on the kept ones, owner annotations on a
// cluster-scoped one. A release stored before the change then reads the same.
func TestGateWritesWhatTheOwnerPostRendererWrote(t *testing.T) {
	golden, err := os.ReadFile("../../../../cmd/render/testdata/golden/all-features.monitoring.yaml")
	require.NoError(t, err)
	manifest := string(golden) + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything-reader\n"

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

	// Nothing exists yet: every read of the ownership check is a 404.
	kc := testKubeClient(t, mapper, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))

	owner := &unstructured.Unstructured{}
	owner.SetGroupVersionKind(ownerKind)
	owner.SetNamespace("team-c")
	owner.SetName("everything")
	owner.SetUID("uid-1")

	want, err := helmclient.DefaultPostRendererFunc(mapper, kc, owner).Run(bytes.NewBufferString(manifest))
	require.NoError(t, err)
	g := &gate{
		cfg:       &action.Configuration{KubeClient: kc},
		policy:    guard.Policy{Namespace: "team-c", Kinds: kinds, ClusterScoped: []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}}},
		ownership: guard.Ownership{Label: "ai-stack-operator.io/managed", Release: "everything", Owner: ownerKind.GroupKind(), Namespace: "team-c", Name: "everything"},
		owner:     owner,
		ownerKind: ownerKind,
	}
	got, err := g.Run(bytes.NewBufferString(manifest))
	require.NoError(t, err)
	assert.Equal(t, want.String(), got.String())
	assert.Contains(t, got.String(), "uid: uid-1", "owner references are set")
	assert.Contains(t, got.String(), "operator-sdk/primary-resource: team-c/everything", "the cluster-scoped object carries the owner annotations")

	// And it still refuses what the policy refuses, before any output.
	g.policy.Namespace = "team-d"
	_, err = g.Run(bytes.NewBufferString(manifest))
	var v *guard.Violation
	require.ErrorAs(t, err, &v)
	assert.Contains(t, v.Error(), `outside the CR's namespace "team-d"`)
}

// testKubeClient is Helm's kube client for namespace team-c of a server that
// answers with handler (for units that only read; the tests of the
// operator's writes run against a real API server).
func testKubeClient(t *testing.T, mapper meta.RESTMapper, handler http.Handler) *helmkube.Client {
	t.Helper()
	api := httptest.NewServer(handler)
	t.Cleanup(api.Close)
	kubeconfig := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: api.URL}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "c", Namespace: "team-c"}},
		CurrentContext: "c",
	}
	getter := genericclioptions.NewTestConfigFlags().WithRESTMapper(mapper).
		WithClientConfig(clientcmd.NewDefaultClientConfig(kubeconfig, nil))
	kc := helmkube.New(getter)
	kc.Namespace = "team-c"
	return kc
}

// Helm's reachability check is asked once per reachableFor, not before each
// action, and a failed check is not remembered.
func TestReachabilityIsRemembered(t *testing.T) {
	var versions atomic.Int32
	var down atomic.Bool
	kc := testKubeClient(t, meta.NewDefaultRESTMapper(nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		versions.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.2"}`))
	}))
	var passed atomic.Int64
	a, b := &KubeClient{Client: kc, passed: &passed}, &KubeClient{Client: kc, passed: &passed}
	for range 3 {
		require.NoError(t, a.IsReachable())
		require.NoError(t, b.IsReachable())
	}
	assert.Equal(t, int32(1), versions.Load(), "one check stands for the clients that share it")

	passed.Store(time.Now().Add(-reachableFor).UnixNano())
	down.Store(true)
	assert.Error(t, a.IsReachable(), "a check older than reachableFor is asked again")
	assert.Error(t, a.IsReachable(), "a failed check is not remembered")
	down.Store(false)
	require.NoError(t, a.IsReachable())
	assert.Equal(t, int32(2), versions.Load())
}
