package trustyai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// longestDomain is a trustyai-ingress-domain of MaxIngressDomainLength
// characters, in labels of at most 63.
var longestDomain = strings.Repeat("d", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("f", MaxIngressDomainLength-128)

func TestIngressSettings(t *testing.T) {
	s, err := ParseSettings(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, s.IngressDomain, "no Ingress unless the administrator asks for one")
	assert.Empty(t, s.IngressClass)

	s, err = ParseSettings(nil, map[string]string{KeyIngressDomain: " apps.example.com\n", KeyIngressClass: "nginx"})
	require.NoError(t, err)
	assert.Equal(t, "apps.example.com", s.IngressDomain)
	assert.Equal(t, "nginx", s.IngressClass)
	s, err = ParseSettings(nil, map[string]string{KeyIngressDomain: longestDomain})
	require.NoError(t, err)
	assert.Equal(t, longestDomain, s.IngressDomain)

	for _, tc := range []struct{ key, value, want string }{
		{KeyIngressDomain, "Apps.Example.com", "lowercase DNS domain"},
		{KeyIngressDomain, "*.apps.example.com", "lowercase DNS domain"},
		{KeyIngressDomain, "apps.example.com.", "lowercase DNS domain"},
		{KeyIngressDomain, "https://apps.example.com", "lowercase DNS domain"},
		{KeyIngressDomain, "apps..example.com", "lowercase DNS domain"},
		{KeyIngressDomain, strings.Repeat("l", 64) + ".example.com", "is over 63 characters"},
		{KeyIngressDomain, longestDomain + "f", "at most 129 characters"},
		{KeyIngressClass, "Nginx", "must name an IngressClass"},
		{KeyIngressClass, "nginx/internal", "must name an IngressClass"},
	} {
		_, err := ParseSettings(nil, map[string]string{tc.key: tc.value})
		var f *status.Failure
		require.ErrorAs(t, err, &f, tc.value)
		assert.Equal(t, status.ReasonInvalidOperatorSettings, f.Reason)
		assert.Contains(t, f.Error(), tc.key)
		assert.Contains(t, f.Message, tc.want)
	}
}
