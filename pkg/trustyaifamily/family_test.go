package trustyaifamily

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// The proxy image in force: the settings key, then the RELATED_IMAGE_
// variable, then upstream's ConfigMap, then the default.
func TestProxyImagePrecedence(t *testing.T) {
	env := []string{EnvProxyImage + "=env/proxy:1"}
	mine := map[string]string{KeyProxyImage: "mine/proxy:1"}
	theirs := map[string]string{KeyProxyImage: "upstream/proxy:1"}
	assert.Equal(t, "mine/proxy:1", ProxyImage(env, mine, theirs))
	assert.Equal(t, "env/proxy:1", ProxyImage(env, nil, theirs))
	assert.Equal(t, "upstream/proxy:1", ProxyImage(nil, nil, theirs))
	assert.Equal(t, DefaultProxyImage, ProxyImage(nil, nil, nil))
}

// The Ingress settings are read, trimmed and refused with the key named
// when they cannot make valid hosts.
func TestIngressSettings(t *testing.T) {
	domain, class, err := IngressSettings(nil)
	require.NoError(t, err)
	assert.Empty(t, domain)
	assert.Empty(t, class)

	domain, class, err = IngressSettings(map[string]string{KeyIngressDomain: " apps.example.com ", KeyIngressClass: "nginx"})
	require.NoError(t, err)
	assert.Equal(t, "apps.example.com", domain)
	assert.Equal(t, "nginx", class)

	longest := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63)
	require.LessOrEqual(t, len(longest), MaxIngressDomainLength)
	_, _, err = IngressSettings(map[string]string{KeyIngressDomain: longest})
	require.NoError(t, err, "a domain of MaxIngressDomainLength or less")

	for name, c := range map[string]struct {
		data map[string]string
		key  string
		msg  string
	}{
		"upper case":      {map[string]string{KeyIngressDomain: "Apps.Example.com"}, KeyIngressDomain, "lowercase DNS domain"},
		"too long":        {map[string]string{KeyIngressDomain: longest + ".cc"}, KeyIngressDomain, "at most 129 characters"},
		"label too long":  {map[string]string{KeyIngressDomain: strings.Repeat("a", 64) + ".com"}, KeyIngressDomain, "is over 63 characters"},
		"class not a DNS": {map[string]string{KeyIngressClass: "Nginx Class"}, KeyIngressClass, "must name an IngressClass"},
	} {
		_, _, err := IngressSettings(c.data)
		var f *status.Failure
		if assert.ErrorAs(t, err, &f, name) {
			assert.Equal(t, "operator settings, key "+c.key, f.Field, name)
			assert.Equal(t, status.ReasonInvalidOperatorSettings, f.Reason, name)
			assert.Contains(t, f.Message, c.msg, name)
		}
	}
}

// fakeReader serves the two ConfigMaps by name, or fails.
type fakeReader struct {
	settings, upstream map[string]string
	fail               string
}

func (f fakeReader) SettingsData(context.Context) (map[string]string, error) {
	if f.fail == "settings" {
		return nil, errors.New("forbidden")
	}
	return f.settings, nil
}

func (f fakeReader) OperatorConfigMapData(_ context.Context, name string) (map[string]string, error) {
	if f.fail == name {
		return nil, errors.New("timeout")
	}
	if name != UpstreamConfigMap {
		return nil, errors.New("read " + name)
	}
	return f.upstream, nil
}

// The family's settings come from the operator's ConfigMap and upstream's;
// a failed read says which.
func TestSettingsData(t *testing.T) {
	ctx := context.Background()
	data, upstream, err := SettingsData(ctx, fakeReader{settings: map[string]string{"a": "1"}, upstream: map[string]string{"b": "2"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1"}, data)
	assert.Equal(t, map[string]string{"b": "2"}, upstream)
	_, _, err = SettingsData(ctx, fakeReader{fail: "settings"})
	assert.EqualError(t, err, "read operator settings: forbidden")
	_, _, err = SettingsData(ctx, fakeReader{fail: UpstreamConfigMap})
	assert.EqualError(t, err, "read upstream's ConfigMap trustyai-service-operator-config: timeout")
}
