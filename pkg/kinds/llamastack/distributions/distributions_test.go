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

// TestDefaultTableFollowsUpstreamsLastRelease: llama-stack-k8s-operator
// v0.9.0 (its last LlamaStackDistribution release) runs llama-stack 0.7.1.
// The distributions that llama-stack 0.7.1 still ships (and publishes
// images of) are at 0.7.1; names it dropped stay at the last tag they had,
// so that CRs naming them keep working.
func TestDefaultTableFollowsUpstreamsLastRelease(t *testing.T) {
	want := map[string]string{
		"starter":       "0.7.1",
		"postgres-demo": "0.7.1",
		// in llama-stack's tree until 0.4, pinned at 0.4.2 by the operator's v0.6.0
		"meta-reference-gpu": "0.4.2",
		// folded into starter in llama-stack 0.2.15; images last pinned at 0.2.23
		"remote-vllm": "0.2.23",
		"bedrock":     "0.2.23",
		"ollama":      "0.2.23",
		"tgi":         "0.2.23",
		"together":    "0.2.23",
		"vllm-gpu":    "0.2.23",
	}
	tab := Default()
	assert.ElementsMatch(t, tab.Names(), keys(want), "names are never dropped: CRs name them")
	for name, tag := range want {
		assert.Equal(t, "docker.io/llamastack/distribution-"+name+":"+tag, tab[name], name)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
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
