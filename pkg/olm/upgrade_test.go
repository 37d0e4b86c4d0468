package olm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/admission"
)

// upstreamStored are CRs as the upstream operators' users stored them, by
// the version they were written in: these are what clusters hold when they
// move to this bundle (v0.1.0 is its first version, so the "previous
// version" is upstream's). Upstream's samples are in config/samples too.
var upstreamStored = []string{`
apiVersion: llamastack.io/v1alpha1
kind: LlamaStackDistribution
metadata: {name: llamastack-with-config, namespace: llama}
spec:
  replicas: 1
  server:
    distribution: {name: starter}
    containerSpec:
      name: llama-stack
      port: 8321
      env:
        - {name: OLLAMA_INFERENCE_MODEL, value: "llama3.2:1b"}
        - {name: OLLAMA_URL, value: "http://ollama-server-service.ollama-dist.svc.cluster.local:11434"}
    storage: {size: 20Gi, mountPath: /home/lls/.lls}
`, `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: TrustyAIService
metadata: {name: trustyai-service, namespace: tas}
spec:
  storage: {format: PVC, folder: /inputs, size: 1Gi}
  data: {filename: data.csv, format: CSV}
  metrics: {schedule: 5s}
`, `
apiVersion: trustyai.opendatahub.io/v1
kind: TrustyAIService
metadata: {name: trustyai-db, namespace: tas}
spec:
  storage: {format: DATABASE, databaseConfigurations: db-credentials}
  metrics: {schedule: 5s, batchSize: 5000}
`}

// The bundle's CRDs keep serving every version upstream's CRDs served (a CR
// stored in one stays readable), keep a storage version upstream had, and
// admit, as the API server would (unknown fields, defaults, schema, CEL),
// the CRs upstream's users stored and every sample.
func TestUpgradeSafety(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(root, "bundle", "manifests", "*.yaml"))
	require.NoError(t, err)
	var crds []*apiextensionsv1.CustomResourceDefinition
	served := map[string]bool{}
	storage := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(b, crd))
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		crds = append(crds, crd)
		for _, v := range crd.Spec.Versions {
			served[crd.Spec.Group+"/"+v.Name] = v.Served
			if v.Storage {
				storage[crd.Spec.Group] = v.Name
			}
		}
	}
	for _, gv := range []string{"llamastack.io/v1alpha1", "ogx.io/v1beta1", "trustyai.opendatahub.io/v1alpha1", "trustyai.opendatahub.io/v1"} {
		assert.True(t, served[gv], "%s, which upstream served, is served", gv)
	}
	assert.Equal(t, map[string]string{"llamastack.io": "v1alpha1", "ogx.io": "v1beta1", "trustyai.opendatahub.io": "v1"}, storage, "upstream's storage versions")

	adm, err := admission.NewAdmission(crds)
	require.NoError(t, err)
	docs := append([]string{}, upstreamStored...)
	samples, _ := filepath.Glob(filepath.Join(root, "config", "samples", "*_*.yaml"))
	for _, s := range samples {
		b, err := os.ReadFile(s)
		require.NoError(t, err)
		for _, d := range bytes.Split(b, []byte("\n---")) {
			docs = append(docs, string(d))
		}
	}
	admitted := 0
	for _, d := range docs {
		j, err := yaml.YAMLToJSON([]byte(d))
		require.NoError(t, err)
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(j), "integers as the API server reads them")
		gvk := u.GroupVersionKind()
		if !adm.Serves(gvk) {
			continue // a Secret or ConfigMap beside a sample
		}
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		assert.NoError(t, adm.Admit(context.Background(), u), "%s %s", gvk.Kind, u.GetName())
		admitted++
	}
	assert.GreaterOrEqual(t, admitted, len(upstreamStored)+len(samples))
	assert.False(t, adm.Serves(schema.GroupVersionKind{Group: "llamastack.io", Version: "v1", Kind: "LlamaStackDistribution"}), "the check can tell a version apart")
}
