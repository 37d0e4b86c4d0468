package runconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"docker.io/llamastack/distribution-starter:0.7.1": "0.7.1",
		"registry:5000/me/llama:0.2.10":                   "0.2.10",
		"registry:5000/me/llama":                          "",
		"quay.io/me/llama@sha256:0123":                    "",
		"quay.io/me/llama:0.3.1@sha256:0123":              "0.3.1",
		"llama":                                           "",
		"":                                                "",
	} {
		assert.Equal(t, want, ImageTag(image), image)
	}
}

func TestParseVersion(t *testing.T) {
	for s, want := range map[string]Version{
		"0.2.23": {0, 2, 23}, "v0.7.1": {0, 7, 1}, "0.3": {0, 3, 0}, "0.2.23rc1": {0, 2, 23},
		"0.7.1-cuda": {0, 7, 1}, "1.2.3": {1, 2, 3},
	} {
		v, ok := ParseVersion(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"latest", "", "0", "x0.2.3", "0.2.230000", "0..1", "sha256:0.2.3", "0.2.3.4"} {
		_, ok := ParseVersion(s)
		assert.False(t, ok, s)
	}
}

func TestTargetFor(t *testing.T) {
	got, err := TargetFor("", "x/starter:0.2.23")
	require.NoError(t, err)
	assert.Equal(t, Target{Version: Version{0, 2, 23}, Source: FromImageTag, Image: "x/starter:0.2.23"}, got)
	assert.Equal(t, SchemaV2, got.Version.Schema())

	got, err = TargetFor("0.7.1", "x/starter:0.2.23")
	require.NoError(t, err)
	assert.Equal(t, Target{Version: Version{0, 7, 1}, Source: FromField}, got, "serverVersion wins")
	assert.Equal(t, SchemaStorage, got.Version.Schema())

	for _, image := range []string{"x/starter:latest", "x/starter@sha256:00", "x/starter", ""} {
		got, err = TargetFor("", image)
		require.NoError(t, err)
		assert.Equal(t, Target{Version: Newest, Source: FromDefault, Image: image}, got, image)
	}

	for _, bad := range []string{"latest", "0.7.1-rc1", "0.7.1.2", " 0.7.1"} {
		_, err = TargetFor(bad, "x/starter:0.2.23")
		var f *status.Failure
		require.ErrorAs(t, err, &f, bad)
		assert.Equal(t, "spec.server.config.serverVersion", f.Field)
	}
}

func TestSchemaBoundary(t *testing.T) {
	assert.Equal(t, SchemaV2, Version{0, 2, 99}.Schema())
	assert.Equal(t, SchemaStorage, Version{0, 3, 0}.Schema())
	assert.Equal(t, SchemaStorage, Newest.Schema())
	assert.Equal(t, SchemaV2, Version{0, 1, 0}.Schema())
}

// Every image of the distribution table says its version, so that a CR
// naming a distribution gets its layout.
func TestDistributionImagesSayTheirVersion(t *testing.T) {
	tab := distributions.Default()
	for _, name := range tab.Names() {
		got, err := TargetFor("", tab[name])
		require.NoError(t, err)
		assert.Equal(t, FromImageTag, got.Source, name)
	}
	starter, err := TargetFor("", tab["starter"])
	require.NoError(t, err)
	assert.Equal(t, Newest, starter.Version, "starter is the newest release this package writes")
}
