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
	s, err := ParseSettings(baseTable, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, baseTable, s.Distributions)
	assert.True(t, s.NetworkPolicy)
	s.Distributions["starter"] = "changed"
	assert.Equal(t, "reg/starter:1", baseTable["starter"], "the base table must not be modified")
}

func TestImagePrecedence(t *testing.T) {
	env := []string{"PATH=/bin", "RELATED_IMAGE_REMOTE_VLLM=mirror/vllm@sha256:abc", "RELATED_IMAGE_STARTER=mirror/starter:1", "RELATED_IMAGE_UNKNOWN=x"}
	s, err := ParseSettings(baseTable, env, map[string]string{KeyImageOverrides: "starter: admin/starter:2\nmy-own: admin/own:1\n"})
	require.NoError(t, err)
	assert.Equal(t, distributions.Table{
		"starter":     "admin/starter:2",        // ConfigMap beats env
		"remote-vllm": "mirror/vllm@sha256:abc", // env beats the table
		"my-own":      "admin/own:1",            // ConfigMap may add names
	}, s.Distributions)
	assert.Equal(t, "RELATED_IMAGE_REMOTE_VLLM", settings.EnvName("remote-vllm"))
}

func TestSwitches(t *testing.T) {
	s, err := ParseSettings(baseTable, nil, map[string]string{KeyNetworkPolicy: "disabled", KeyCrossNamespaceCABundles: "enabled"})
	require.NoError(t, err)
	assert.False(t, s.NetworkPolicy)
	assert.True(t, s.CrossNamespaceCABundles)

	s, err = ParseSettings(baseTable, nil, nil)
	require.NoError(t, err)
	assert.True(t, s.NetworkPolicy)
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
			_, err := ParseSettings(baseTable, nil, data)
			var se *status.Failure
			require.True(t, errors.As(err, &se), "got %v", err)
			assert.Equal(t, "InvalidOperatorSettings", se.Reason)
			assert.Contains(t, err.Error(), "operator settings, key ")
		})
	}
}

func TestProgressDeadline(t *testing.T) {
	s, err := ParseSettings(baseTable, nil, nil)
	require.NoError(t, err)
	assert.Zero(t, s.ProgressDeadlineSeconds, "unset leaves Kubernetes' default")
	s, err = ParseSettings(baseTable, nil, map[string]string{KeyProgressDeadlineSeconds: " 20 "})
	require.NoError(t, err)
	assert.Equal(t, int32(20), s.ProgressDeadlineSeconds)
	for _, bad := range []string{"0", "-5", "ten", "1.5", "99999999999"} {
		_, err := ParseSettings(baseTable, nil, map[string]string{KeyProgressDeadlineSeconds: bad})
		var se *status.Failure
		require.True(t, errors.As(err, &se), bad)
		assert.Equal(t, "operator settings, key "+KeyProgressDeadlineSeconds, se.Field)
	}
}
