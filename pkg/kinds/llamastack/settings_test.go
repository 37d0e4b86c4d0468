package llamastack

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

var baseTable = distributions.Table{"starter": "reg/starter:1", "remote-vllm": "reg/vllm:1"}

func TestParseDefaults(t *testing.T) {
	s, err := ParseSettings(baseTable, nil, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, baseTable, s.Distributions)
	assert.False(t, s.NetworkPolicy, "upstream's default: no NetworkPolicy")
	assert.False(t, s.AnyUID, "pods run restricted by default")
	s.Distributions["starter"] = "changed"
	assert.Equal(t, "reg/starter:1", baseTable["starter"], "the base table must not be modified")
}

func TestImagePrecedence(t *testing.T) {
	env := []string{"PATH=/bin", "RELATED_IMAGE_REMOTE_VLLM=mirror/vllm@sha256:abc", "RELATED_IMAGE_STARTER=mirror/starter:1", "RELATED_IMAGE_UNKNOWN=x"}
	s, err := ParseSettings(baseTable, env, map[string]string{KeyImageOverrides: "starter: admin/starter:2\nmy-own: admin/own:1\n"}, nil)
	require.NoError(t, err)
	assert.Equal(t, distributions.Table{
		"starter":     "admin/starter:2",        // ConfigMap beats env
		"remote-vllm": "mirror/vllm@sha256:abc", // env beats the table
		"my-own":      "admin/own:1",            // ConfigMap may add names
	}, s.Distributions)
	assert.Equal(t, "RELATED_IMAGE_REMOTE_VLLM", settings.EnvName("remote-vllm"))
}

func TestSwitches(t *testing.T) {
	s, err := ParseSettings(baseTable, nil, map[string]string{KeyNetworkPolicy: "disabled", KeyCrossNamespaceCABundles: "enabled"}, nil)
	require.NoError(t, err)
	assert.False(t, s.NetworkPolicy)
	assert.True(t, s.CrossNamespaceCABundles)

	s, err = ParseSettings(baseTable, nil, map[string]string{KeyNetworkPolicy: "enabled", KeyAnyUID: "enabled"}, nil)
	require.NoError(t, err)
	assert.True(t, s.NetworkPolicy)
	assert.True(t, s.AnyUID)
	assert.False(t, s.CrossNamespaceCABundles, "cross-namespace CA bundles are off by default")
}

func TestParseErrors(t *testing.T) {
	for name, data := range map[string]map[string]string{
		"overrides not a map": {KeyImageOverrides: "- a\n- b\n"},
		"empty image":         {KeyImageOverrides: "starter: \"\"\n"},
		"bad policy value":    {KeyNetworkPolicy: "off"},
		"bad cross-namespace": {KeyCrossNamespaceCABundles: "yes"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSettings(baseTable, nil, data, nil)
			var se *status.Failure
			require.True(t, errors.As(err, &se), "got %v", err)
			assert.Equal(t, "InvalidOperatorSettings", se.Reason)
			assert.Contains(t, err.Error(), "operator settings, key ")
		})
	}
}

func TestProgressDeadline(t *testing.T) {
	s, err := ParseSettings(baseTable, nil, nil, nil)
	require.NoError(t, err)
	assert.Zero(t, s.ProgressDeadlineSeconds, "unset leaves Kubernetes' default")
	s, err = ParseSettings(baseTable, nil, map[string]string{KeyProgressDeadlineSeconds: " 20 "}, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(20), s.ProgressDeadlineSeconds)
	for _, bad := range []string{"0", "-5", "ten", "1.5", "99999999999"} {
		_, err := ParseSettings(baseTable, nil, map[string]string{KeyProgressDeadlineSeconds: bad}, nil)
		var se *status.Failure
		require.True(t, errors.As(err, &se), bad)
		assert.Equal(t, "operator settings, key "+KeyProgressDeadlineSeconds, se.Field)
	}
}

// Upstream's ConfigMap llama-stack-operator-config: featureFlags turn the
// NetworkPolicy on as upstream reads them, below this operator's own key.
func TestUpstreamFeatureFlags(t *testing.T) {
	on := map[string]string{UpstreamKeyFeatureFlags: "enableNetworkPolicy:\n  enabled: true\n"}
	for name, tc := range map[string]struct {
		data, upstream map[string]string
		want           bool
	}{
		"upstream on":                   {upstream: on, want: true},
		"upstream off":                  {upstream: map[string]string{UpstreamKeyFeatureFlags: "enableNetworkPolicy:\n  enabled: false\n"}},
		"upstream other flags":          {upstream: map[string]string{UpstreamKeyFeatureFlags: "somethingElse:\n  enabled: true\n"}},
		"upstream without featureFlags": {upstream: map[string]string{"image-overrides": ""}},
		"ours off beats upstream on":    {data: map[string]string{KeyNetworkPolicy: "disabled"}, upstream: on},
		"ours on, upstream absent":      {data: map[string]string{KeyNetworkPolicy: "enabled"}, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSettings(baseTable, nil, tc.data, tc.upstream)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.NetworkPolicy)
		})
	}
	_, err := ParseSettings(baseTable, nil, nil, map[string]string{UpstreamKeyFeatureFlags: "enableNetworkPolicy: [unclosed\n"})
	var se *status.Failure
	require.True(t, errors.As(err, &se), "got %v", err)
	assert.Equal(t, "InvalidOperatorSettings", se.Reason)
	assert.Equal(t, "ConfigMap llama-stack-operator-config, key featureFlags", se.Field)
}

// Upstream's image-overrides apply below this operator's own and above
// RELATED_IMAGE_*; upstream skips what it cannot use, and so does this.
func TestUpstreamImageOverrides(t *testing.T) {
	env := []string{"RELATED_IMAGE_STARTER=mirror/starter:1", "RELATED_IMAGE_REMOTE_VLLM=mirror/vllm:1"}
	upstream := map[string]string{UpstreamKeyImageOverrides: "starter: upstream/starter:9\nremote-vllm: upstream/vllm:9\nbroken: \"\"\n"}
	s, err := ParseSettings(baseTable, env, map[string]string{KeyImageOverrides: "remote-vllm: ours/vllm:5\n"}, upstream)
	require.NoError(t, err)
	assert.Equal(t, distributions.Table{
		"starter":     "upstream/starter:9", // upstream's ConfigMap beats env
		"remote-vllm": "ours/vllm:5",        // ours beats upstream's
	}, s.Distributions)
	s, err = ParseSettings(baseTable, env, nil, map[string]string{UpstreamKeyImageOverrides: "- not\n- a map\n"})
	require.NoError(t, err, "upstream ignores an image-overrides value it cannot read")
	assert.Equal(t, "mirror/starter:1", s.Distributions["starter"])
}
