package trustyai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// longestDomain is a trustyai-ingress-domain of trustyaifamily.MaxIngressDomainLength
// characters, in labels of at most 63.
var longestDomain = strings.Repeat("d", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("f", trustyaifamily.MaxIngressDomainLength-128)

func TestIngressSettings(t *testing.T) {
	s, err := ParseSettings(nil, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, s.IngressDomain, "no Ingress unless the administrator asks for one")
	assert.Empty(t, s.IngressClass)

	s, err = ParseSettings(nil, map[string]string{trustyaifamily.KeyIngressDomain: " apps.example.com\n", trustyaifamily.KeyIngressClass: "nginx"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "apps.example.com", s.IngressDomain)
	assert.Equal(t, "nginx", s.IngressClass)
	s, err = ParseSettings(nil, map[string]string{trustyaifamily.KeyIngressDomain: longestDomain}, nil)
	require.NoError(t, err)
	assert.Equal(t, longestDomain, s.IngressDomain)

	for _, tc := range []struct{ key, value, want string }{
		{trustyaifamily.KeyIngressDomain, "Apps.Example.com", "lowercase DNS domain"},
		{trustyaifamily.KeyIngressDomain, "*.apps.example.com", "lowercase DNS domain"},
		{trustyaifamily.KeyIngressDomain, "apps.example.com.", "lowercase DNS domain"},
		{trustyaifamily.KeyIngressDomain, "https://apps.example.com", "lowercase DNS domain"},
		{trustyaifamily.KeyIngressDomain, "apps..example.com", "lowercase DNS domain"},
		{trustyaifamily.KeyIngressDomain, strings.Repeat("l", 64) + ".example.com", "is over 63 characters"},
		{trustyaifamily.KeyIngressDomain, longestDomain + "f", "at most 129 characters"},
		{trustyaifamily.KeyIngressClass, "Nginx", "must name an IngressClass"},
		{trustyaifamily.KeyIngressClass, "nginx/internal", "must name an IngressClass"},
	} {
		_, err := ParseSettings(nil, map[string]string{tc.key: tc.value}, nil)
		var f *status.Failure
		require.ErrorAs(t, err, &f, tc.value)
		assert.Equal(t, status.ReasonInvalidOperatorSettings, f.Reason)
		assert.Contains(t, f.Error(), tc.key)
		assert.Contains(t, f.Message, tc.want)
	}
}

// Images: our settings key, then RELATED_IMAGE_, then upstream's ConfigMap
// key (upstream's order between the last two), then the default.
func TestImagePrecedence(t *testing.T) {
	ours := map[string]string{KeyServiceImage: "ours/tas:1", trustyaifamily.KeyProxyImage: "ours/proxy:1"}
	env := []string{EnvServiceImage + "=env/tas:1", trustyaifamily.EnvProxyImage + "=env/proxy:1"}
	upstream := map[string]string{KeyServiceImage: "upstream/tas:1", trustyaifamily.KeyProxyImage: "upstream/proxy:1"}
	for _, tc := range []struct {
		name           string
		env            []string
		ours, upstream map[string]string
		service, proxy string
	}{
		{"defaults", nil, nil, nil, DefaultServiceImage, trustyaifamily.DefaultProxyImage},
		{"upstream's ConfigMap over the default", nil, nil, upstream, "upstream/tas:1", "upstream/proxy:1"},
		{"RELATED_IMAGE_ over upstream's ConfigMap", env, nil, upstream, "env/tas:1", "env/proxy:1"},
		{"our key over RELATED_IMAGE_", env, ours, upstream, "ours/tas:1", "ours/proxy:1"},
		{"our key over upstream's ConfigMap", nil, ours, upstream, "ours/tas:1", "ours/proxy:1"},
		{"blank keys do not count", nil, map[string]string{KeyServiceImage: " "}, map[string]string{KeyServiceImage: "", trustyaifamily.KeyProxyImage: " upstream/proxy:2\n"}, DefaultServiceImage, "upstream/proxy:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSettings(tc.env, tc.ours, tc.upstream)
			require.NoError(t, err)
			assert.Equal(t, tc.service, s.ServiceImage)
			assert.Equal(t, tc.proxy, s.ProxyImage)
		})
	}
}

// kServeServerless: our key when set; else upstream's, read as upstream
// reads it (exactly "enabled"; anything else disables, never an error);
// else disabled.
func TestServerlessFromUpstreamsConfigMap(t *testing.T) {
	for _, tc := range []struct {
		ours, upstream string
		want           bool
	}{
		{"", "", false},
		{"", "enabled", true},
		{"", "disabled", false},
		{"", "Enabled", false},
		{"", "yes", false},
		{"disabled", "enabled", false},
		{"enabled", "disabled", true},
	} {
		var ours, upstream map[string]string
		if tc.ours != "" {
			ours = map[string]string{KeyServerless: tc.ours}
		}
		if tc.upstream != "" {
			upstream = map[string]string{KeyServerless: tc.upstream}
		}
		s, err := ParseSettings(nil, ours, upstream)
		require.NoError(t, err, "upstream's value %q is never an error", tc.upstream)
		assert.Equal(t, tc.want, s.Serverless, "ours %q, upstream's %q", tc.ours, tc.upstream)
	}
}

// A change to upstream's ConfigMap reconciles every TrustyAIService, as one
// to the settings does.
func TestSharedConfigMapsIncludeUpstreams(t *testing.T) {
	k := &Kind{}
	k.OperatorNamespace, k.SettingsConfigMap = "ops", "ai-stack-operator-config"
	assert.Equal(t, []string{"ops/ai-stack-operator-config", "ops/trustyai-service-operator-config"}, k.SharedConfigMaps())
	k.OperatorNamespace = ""
	assert.Empty(t, k.SharedConfigMaps(), "offline: no ConfigMap")
}
