package operator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// Every RELATED_IMAGE_ variable a kind reads names an image the CSV lists
// (relatedImages, what a mirroring tool copies for a disconnected cluster),
// so that a new image cannot be forgotten: the variables are found in the
// kinds' source, not listed here. The driver's is the operator's own image.
func TestEveryImageAKindDeploysIsRelated(t *testing.T) {
	related := RelatedImages()
	// The CSV names an image by its variable, or by a name whose variable
	// is settings.EnvName's (the distributions').
	envs := map[string]bool{}
	for name := range related {
		if strings.HasPrefix(name, settings.RelatedImagePrefix) {
			envs[name] = true
		} else {
			envs[settings.EnvName(name)] = true
		}
	}
	// has says whether a variable (or, ending in "_", a family of them:
	// RELATED_IMAGE_OGX_<NAME>) is related.
	has := func(v string) bool {
		if !strings.HasSuffix(v, "_") {
			return envs[v]
		}
		for e := range envs {
			if strings.HasPrefix(e, v) {
				return true
			}
		}
		return false
	}
	found := 0
	for _, dir := range []string{"../kinds", "../trustyaifamily"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(v, settings.RelatedImagePrefix) || v == settings.RelatedImagePrefix || v == lmeval.EnvDriverImage {
					return true
				}
				found++
				assert.True(t, has(v), "%s: %s is not in the relatedImages (operator.RelatedImages): add the image to its kind's Meta.RelatedImages", path, v)
				return true
			})
			return nil
		})
		assert.NoError(t, err)
	}
	assert.GreaterOrEqual(t, found, 5, "the walk finds the kinds' RELATED_IMAGE_ variables")
	for name, image := range related {
		assert.NotEmpty(t, image, name)
	}
}
