package configgen

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
)

// TestDeterminism generates each golden case several times (Go's map
// order differs between runs), with the base's map keys shuffled, and
// expects the same bytes and env vars.
func TestDeterminism(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", specFile))
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := loadCase(t, dir)
			first, firstErr := Generate(in)
			for i := 0; i < 10; i++ {
				shuffled := in
				shuffled.Base = shuffleBase(t, in.Base, rng)
				out, err := Generate(shuffled)
				if firstErr != nil {
					require.Error(t, err)
					assert.Equal(t, firstErr.Error(), err.Error())
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, string(first.Config), string(out.Config))
				assert.Equal(t, first.Env, out.Env)
				assert.Equal(t, first.Prelude, out.Prelude)
				assert.Equal(t, first.Providers, out.Providers)
			}
		})
	}
}

// TestDeterminismManyKeys uses many secretRefs and settings keys, so that
// random map order would show.
func TestDeterminismManyKeys(t *testing.T) {
	refs := map[string]v1beta1.SecretKeyRef{}
	settings := "{"
	for i := 0; i < 30; i++ {
		refs[fmt.Sprintf("secret-%02d", i)] = v1beta1.SecretKeyRef{Name: "s", Key: fmt.Sprintf("k%d", i)}
		if i > 0 {
			settings += ","
		}
		settings += fmt.Sprintf(`"setting_%02d":{"b":%d,"a":[%d,"x"]}`, i, i, i)
	}
	settings += "}"
	spec := &v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{ToolRuntime: &v1beta1.ToolRuntimeProvidersSpec{
		Remote: &v1beta1.ToolRuntimeRemoteProviders{Custom: []v1beta1.CustomProvider{{
			Type: "remote::many", SecretRefs: refs, Settings: &apiextensionsv1.JSON{Raw: []byte(settings)},
		}}},
	}}}
	in := Input{Spec: spec, Base: []byte(minimalBase), DistroName: "d"}
	first, err := Generate(in)
	require.NoError(t, err)
	require.Len(t, first.Env, 30)
	for i := 0; i < 20; i++ {
		out, err := Generate(in)
		require.NoError(t, err)
		require.Equal(t, string(first.Config), string(out.Config))
		require.Equal(t, first.Env, out.Env)
	}
}

// shuffleBase re-encodes a base with the pairs of every map in random
// order (the base stays the same YAML value).
func shuffleBase(t *testing.T, base []byte, rng *rand.Rand) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil || len(doc.Content) == 0 {
		return base
	}
	shuffleNode(doc.Content[0], rng)
	out, err := yaml.Marshal(&doc)
	require.NoError(t, err)
	return out
}

func shuffleNode(n *yaml.Node, rng *rand.Rand) {
	if n.Kind == yaml.ScalarNode && n.Style == 0 {
		// Written back verbatim, not quoted by the encoder's YAML 1.2
		// reading (1:20 is a number to the server's YAML 1.1).
		n.Tag = ""
	}
	// Block style: in flow style the encoder quotes 1:20.
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.MappingNode {
		pairs := len(n.Content) / 2
		rng.Shuffle(pairs, func(i, j int) {
			n.Content[2*i], n.Content[2*j] = n.Content[2*j], n.Content[2*i]
			n.Content[2*i+1], n.Content[2*j+1] = n.Content[2*j+1], n.Content[2*i+1]
		})
		// Anchors must come before their aliases: keep a defining pair
		// first if it moved after a use.
		for i := 0; i < pairs; i++ {
			if n.Content[2*i+1].Anchor != "" {
				n.Content[0], n.Content[2*i] = n.Content[2*i], n.Content[0]
				n.Content[1], n.Content[2*i+1] = n.Content[2*i+1], n.Content[1]
				break
			}
		}
	}
	for _, c := range n.Content {
		shuffleNode(c, rng)
	}
}
