package llamastack

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// TestTypedConfigLayoutFollowsTheServer: spec.server.config is written in
// the layout of the server it runs on: the tag of the distribution's image
// (a name resolves through the table, overrides included), unless
// spec.server.config.serverVersion says otherwise; a tag that is no version
// gets the newest layout.
func TestTypedConfigLayoutFollowsTheServer(t *testing.T) {
	tab := distributions.Table{
		"old":    "example.com/llama/distribution-old:0.2.23",
		"new":    "example.com/llama/distribution-new:0.7.1",
		"mid":    "example.com/llama/distribution-mid:v0.4.2-cuda",
		"latest": "example.com/llama/distribution-latest:latest",
	}
	const v2, v3, v5 = "v2", "storage, image_name", "storage, distro_name"
	tests := []struct {
		name          string
		dist          llamav1alpha1.DistributionType
		serverVersion string
		want          string
	}{
		{"name of a 0.2 image", llamav1alpha1.DistributionType{Name: "old"}, "", v2},
		{"name of a 0.7 image", llamav1alpha1.DistributionType{Name: "new"}, "", v5},
		{"name of a 0.4 image, v prefix and suffix", llamav1alpha1.DistributionType{Name: "mid"}, "", v3},
		{"name of a latest image: newest", llamav1alpha1.DistributionType{Name: "latest"}, "", v5},
		{"image with a 0.2 tag", llamav1alpha1.DistributionType{Image: "registry:5000/me/llama:0.2.10"}, "", v2},
		{"image by digest: newest", llamav1alpha1.DistributionType{Image: "quay.io/me/llama@sha256:0123abcd"}, "", v5},
		{"image without tag: newest", llamav1alpha1.DistributionType{Image: "quay.io/me/llama"}, "", v5},
		{"serverVersion wins over a 0.2 tag", llamav1alpha1.DistributionType{Name: "old"}, "0.7.1", v5},
		{"serverVersion wins over a 0.7 tag", llamav1alpha1.DistributionType{Name: "new"}, "0.2.23", v2},
		{"serverVersion wins over latest", llamav1alpha1.DistributionType{Name: "latest"}, "v0.3", v3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
				c.Spec.Server.Distribution = tt.dist
				c.Spec.Server.Config = &llamav1alpha1.ServerConfig{
					ServerVersion: tt.serverVersion,
					Providers: &llamav1alpha1.Providers{Inference: []llamav1alpha1.Provider{
						{ProviderID: "vllm", ProviderType: "remote::vllm"},
					}},
				}
			}), valuesInputs{Distributions: tab})
			require.NoError(t, err)
			got := v2
			switch {
			case strings.Contains(v.RunConfig, "\nstorage:\n") && strings.Contains(v.RunConfig, "\nimage_name: "):
				got = v3
			case strings.Contains(v.RunConfig, "\nstorage:\n") && strings.Contains(v.RunConfig, "\ndistro_name: "):
				got = v5
			}
			assert.Equal(t, tt.want, got, v.RunConfig)
		})
	}
}

// A typed field the chosen server does not read is InvalidSpec, naming the
// field, the version and where the version came from.
func TestTypedConfigRefusesWhatTheServerCannotRead(t *testing.T) {
	tab := distributions.Table{"new": "example.com/llama/distribution-new:0.7.1"}
	_, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Distribution = llamav1alpha1.DistributionType{Name: "new"}
		c.Spec.Server.Config = &llamav1alpha1.ServerConfig{Providers: &llamav1alpha1.Providers{
			Agents: []llamav1alpha1.Provider{{ProviderID: "meta-reference", ProviderType: "inline::meta-reference"}},
		}}
	}), valuesInputs{Distributions: tab})
	var f *status.Failure
	require.ErrorAs(t, err, &f)
	assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
	assert.Equal(t, "spec.server.config.providers.agents", f.Field)
	assert.Contains(t, f.Error(), "llama-stack 0.7.1 (the tag of image example.com/llama/distribution-new:0.7.1)")
	assert.Contains(t, f.Error(), "providers.responses")
}
