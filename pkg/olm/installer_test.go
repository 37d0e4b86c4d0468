package olm

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The installation without OLM holds every CRD, the operator's RBAC and its
// Deployment in its namespace, with the image asked for.
func TestInstallerHasEverythingWithTheImage(t *testing.T) {
	b, err := Installer(root, "registry.example.com/me/ai-stack-operator:v9.9.9")
	require.NoError(t, err)
	kinds := map[string]int{}
	var dep *appsv1.Deployment
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(doc, &o))
		kinds[o.Kind]++
		if o.Kind == "Deployment" {
			dep = &appsv1.Deployment{}
			require.NoError(t, yaml.Unmarshal(doc, dep))
		}
	}
	assert.Equal(t, 6, kinds["CustomResourceDefinition"], "the CRDs of LlamaStackDistribution, OGXServer, TrustyAIService, LMEvalJob, NemoGuardrails and EvalHub: %v", kinds)
	assert.Equal(t, 1, kinds["Namespace"])
	assert.NotZero(t, kinds["ClusterRole"])
	assert.NotZero(t, kinds["ClusterRoleBinding"])
	require.NotNil(t, dep)
	assert.Equal(t, "ai-stack-operator-system", dep.Namespace)
	assert.Equal(t, "registry.example.com/me/ai-stack-operator:v9.9.9", dep.Spec.Template.Spec.Containers[0].Image)

	digest, err := Installer(root, "registry.example.com/me/op@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	require.NoError(t, err)
	assert.Contains(t, string(digest), "image: registry.example.com/me/op@sha256:0123456789abcdef")
}
