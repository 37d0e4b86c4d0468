package settings

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImages(t *testing.T) {
	base := map[string]string{"a": "reg/a:1", "b-c": "reg/bc:1"}
	got, err := Images(base, []string{"RELATED_IMAGE_B_C=mirror/bc:1", "RELATED_IMAGE_A=", "PATH=/bin"}, map[string]string{"images": "a: admin/a:2\nnew: admin/new:1\n"}, "images", "thing")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "admin/a:2", "b-c": "mirror/bc:1", "new": "admin/new:1"}, got)
	assert.Equal(t, "reg/a:1", base["a"], "base is not modified")

	_, err = Images(base, nil, map[string]string{"images": "[1, 2]"}, "images", "thing")
	assert.ErrorContains(t, err, "operator settings, key images: must be a YAML map of thing name to image")
	_, err = Images(base, nil, map[string]string{"images": `a: " "`}, "images", "thing")
	assert.EqualError(t, err, `operator settings, key images: the image of "a" is empty`)
}

func TestSwitchAndSeconds(t *testing.T) {
	on, err := Switch(nil, "k", true)
	require.NoError(t, err)
	assert.True(t, on)
	on, err = Switch(map[string]string{"k": " disabled "}, "k", true)
	require.NoError(t, err)
	assert.False(t, on)
	_, err = Switch(map[string]string{"k": "yes"}, "k", true)
	assert.EqualError(t, err, `operator settings, key k: must be enabled or disabled, got "yes"`)

	n, err := Seconds(map[string]string{"s": "90"}, "s")
	require.NoError(t, err)
	assert.Equal(t, int32(90), n)
	n, err = Seconds(nil, "s")
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = Seconds(map[string]string{"s": "0"}, "s")
	assert.ErrorContains(t, err, "must be a whole number of seconds, 1 or more")
	assert.Equal(t, "InvalidOperatorSettings", Invalid("s", "x").Reason)
}
