package runconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// js turns a YAML or JSON snippet into a free-form field, bytes as given.
func js(t *testing.T, s string) *apiextensionsv1.JSON {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(s))
	require.NoError(t, err)
	return &apiextensionsv1.JSON{Raw: raw}
}

// rawJSON is a free-form field with exactly these JSON bytes.
func rawJSON(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

// parseConfig reads spec.server.config written as YAML.
func parseConfig(t *testing.T, s string) *v1alpha1.ServerConfig {
	t.Helper()
	var c v1alpha1.ServerConfig
	require.NoError(t, yaml.UnmarshalStrict([]byte(s), &c))
	return &c
}

// ollama is a config with one inference provider, the base of most cases.
func ollama() *v1alpha1.ServerConfig {
	return &v1alpha1.ServerConfig{
		Providers: &v1alpha1.Providers{
			Inference: []v1alpha1.Provider{{
				ProviderID:   "ollama",
				ProviderType: "remote::ollama",
				Config:       rawJSON(`{"url":"${env.OLLAMA_URL:=http://localhost:11434}"}`),
			}},
		},
	}
}

// Images whose tags choose each layout.
const (
	imageV2      = "docker.io/llamastack/distribution-starter:0.2.23"
	imageV3      = "docker.io/llamastack/distribution-starter:0.3.0"
	imageCurrent = "docker.io/llamastack/distribution-starter:0.7.1"
)

// defaultOpts render the 0.2 layout, which most mapping tests spell out.
var defaultOpts = Options{ImageName: "starter", Image: imageV2, Port: 8321}
