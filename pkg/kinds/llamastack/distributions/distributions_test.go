package distributions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultTableHasPinnedImages(t *testing.T) {
	tab := Default()
	require.Contains(t, tab, "starter")
	for name, img := range tab {
		assert.NotEmpty(t, name)
		assert.True(t, strings.Contains(img, ":") && !strings.HasSuffix(img, ":latest"), "image of %s is not pinned: %s", name, img)
	}
}

func TestImage(t *testing.T) {
	tab := Table{"b": "img-b", "a": "img-a"}
	img, err := tab.Image("a")
	require.NoError(t, err)
	assert.Equal(t, "img-a", img)

	_, err = tab.Image("nope")
	require.Error(t, err)
	assert.Equal(t, `unknown distribution "nope"; valid names: a, b`, err.Error())
}
