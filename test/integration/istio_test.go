package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// installTestCRD installs a CRD of test/testdata/crds (the minimal ones the
// kuttl suites install too) and waits until the API server serves it; it
// is removed when the test ends.
func installTestCRD(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "crds", file))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(raw, crd))
	scheme := runtime.NewScheme()
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	require.NoError(t, err)
	require.NoError(t, client.IgnoreAlreadyExists(c.Create(context.Background(), crd)))
	t.Cleanup(func() { removeAPI(t, crd.Name) })
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Kind: crd.Spec.Names.ListKind}
	env.Eventually(t, "the "+crd.Spec.Names.Kind+" API served", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		return k8s.List(context.Background(), list, client.Limit(1))
	})
}

// istioObject reads a DestinationRule or VirtualService.
func istioObject(ns, kind, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("networking.istio.io/v1beta1")
	u.SetKind(kind)
	return u, env.Get(ns, name, u)
}

// With Istio's APIs (the minimal CRDs of test/testdata/crds), KServe's and a
// certificate creator (cert-manager's API), a TrustyAIService gets
// upstream's DestinationRule <name>-internal and VirtualService
// <name>-redirect once an InferenceService it wires asks for an Istio
// sidecar, and that one logs over http (its sidecar sends it on over TLS).
// The routes are the release's: an edit is repaired, they go when no model
// server asks for a sidecar any more, and with the CR.
func TestTrustyAIServiceIstioRoutes(t *testing.T) {
	installAPI(t, "cert-manager.io", "Certificate", "certificates", apiextensionsv1.NamespaceScoped)
	installAPI(t, "cert-manager.io", "Issuer", "issuers", apiextensionsv1.NamespaceScoped)
	t.Cleanup(func() {
		removeAPI(t, "certificates.cert-manager.io")
		removeAPI(t, "issuers.cert-manager.io")
	})
	installAPIVersion(t, "serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices", apiextensionsv1.NamespaceScoped)
	t.Cleanup(func() { removeAPI(t, "inferenceservices.serving.kserve.io") })
	installTestCRD(t, "networking.istio.io_destinationrules.yaml")
	installTestCRD(t, "networking.istio.io_virtualservices.yaml")
	time.Sleep(time.Second) // the suite's capability TTL is 500 ms

	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, inferenceService(ns, "plain", "RawDeployment")))
	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	https, http := "https://tas."+ns+".svc.cluster.local", "http://tas."+ns+".svc.cluster.local"
	env.Eventually(t, "the InferenceService without a sidecar wired", func() error {
		if l := logger(t, ns, "plain"); l["url"] != https {
			return fmt.Errorf("logger %v", l)
		}
		return nil
	})
	_, err := istioObject(ns, "DestinationRule", "tas-internal")
	assert.Error(t, err, "no sidecar asked for: no DestinationRule")
	_, err = istioObject(ns, "VirtualService", "tas-redirect")
	assert.Error(t, err, "no sidecar asked for: no VirtualService")

	meshed := inferenceService(ns, "meshed", "RawDeployment")
	meshed.SetAnnotations(map[string]string{"serving.kserve.io/deploymentMode": "RawDeployment", "sidecar.istio.io/inject": "true"})
	require.NoError(t, k8s.Create(ctx, meshed))
	var rule, virtual *unstructured.Unstructured
	env.Eventually(t, "the mesh's routes", func() error {
		var err error
		if rule, err = istioObject(ns, "DestinationRule", "tas-internal"); err != nil {
			return err
		}
		virtual, err = istioObject(ns, "VirtualService", "tas-redirect")
		return err
	})
	host := "tas." + ns + ".svc.cluster.local"
	ruleHost, _, _ := unstructured.NestedString(rule.Object, "spec", "host")
	assert.Equal(t, host, ruleHost)
	ports, _, _ := unstructured.NestedSlice(rule.Object, "spec", "trafficPolicy", "portLevelSettings")
	assert.Equal(t, []any{map[string]any{"port": map[string]any{"number": int64(443)}, "tls": map[string]any{"mode": "SIMPLE"}}}, ports)
	hosts, _, _ := unstructured.NestedStringSlice(virtual.Object, "spec", "hosts")
	assert.Equal(t, []string{host}, hosts)
	routes, _, _ := unstructured.NestedSlice(virtual.Object, "spec", "http")
	assert.Equal(t, []any{map[string]any{
		"match": []any{map[string]any{"port": int64(80)}},
		"route": []any{map[string]any{"destination": map[string]any{"host": host, "port": map[string]any{"number": int64(443)}}}},
	}}, routes)
	cr := &trustyv1.TrustyAIService{}
	require.NoError(t, env.Get(ns, "tas", cr))
	for _, o := range []*unstructured.Unstructured{rule, virtual} {
		assert.Equal(t, "true", o.GetLabels()["ai-stack-operator.io/managed"], o.GetKind())
		assert.Equal(t, "tas", o.GetLabels()["app.kubernetes.io/instance"], o.GetKind())
		owner := metav1.GetControllerOf(o)
		require.NotNil(t, owner, o.GetKind())
		assert.Equal(t, cr.UID, owner.UID, o.GetKind())
	}
	env.Eventually(t, "the sidecar's InferenceService logs over http", func() error {
		if l := logger(t, ns, "meshed"); l["url"] != http {
			return fmt.Errorf("logger %v", l)
		}
		return nil
	})
	assert.Equal(t, https, logger(t, ns, "plain")["url"], "the one without a sidecar keeps https")

	// Drift: an edit is repaired (the kind is not watched: on the next reconcile).
	require.NoError(t, unstructured.SetNestedField(rule.Object, "DISABLE", "spec", "trafficPolicy", "portLevelSettings"))
	require.NoError(t, k8s.Update(ctx, rule))
	env.Eventually(t, "the DestinationRule repaired", func() error {
		r, err := istioObject(ns, "DestinationRule", "tas-internal")
		if err != nil {
			return err
		}
		if p, _, _ := unstructured.NestedSlice(r.Object, "spec", "trafficPolicy", "portLevelSettings"); len(p) != 1 {
			return fmt.Errorf("portLevelSettings %v", r.Object["spec"])
		}
		return nil
	})

	// No model server asks for a sidecar any more: the routes go.
	require.NoError(t, k8s.Delete(ctx, meshed))
	env.Eventually(t, "the routes removed with the last sidecar client", func() error {
		if _, err := istioObject(ns, "VirtualService", "tas-redirect"); err == nil {
			return fmt.Errorf("VirtualService still there")
		}
		if _, err := istioObject(ns, "DestinationRule", "tas-internal"); err == nil {
			return fmt.Errorf("DestinationRule still there")
		}
		return nil
	})

	// They come back with one, and go with the CR.
	meshed = inferenceService(ns, "meshed", "RawDeployment")
	meshed.SetAnnotations(map[string]string{"serving.kserve.io/deploymentMode": "RawDeployment", "sidecar.istio.io/inject": "true"})
	require.NoError(t, k8s.Create(ctx, meshed))
	env.Eventually(t, "the mesh's routes again", func() error {
		_, err := istioObject(ns, "VirtualService", "tas-redirect")
		return err
	})
	require.NoError(t, env.Get(ns, "tas", cr))
	require.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	for kind, name := range map[string]string{"DestinationRule": "tas-internal", "VirtualService": "tas-redirect"} {
		_, err := istioObject(ns, kind, name)
		assert.True(t, err != nil && client.IgnoreNotFound(err) == nil, "%s %s deleted with the CR (%v)", kind, name, err)
	}
}
