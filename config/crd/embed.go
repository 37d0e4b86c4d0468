// Package crd embeds the generated CustomResourceDefinitions (bases/), so that
// the offline renderer applies the same schema defaults as the API server.
package crd

import (
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// All returns the embedded CRDs of the kinds served (config/crd/bases).
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) { return read("bases/*.yaml") }

func read(glob string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(bases, glob)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, n := range names {
		b, err := bases.ReadFile(n)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
