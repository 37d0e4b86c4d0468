// Package distributions maps Llama Stack distribution names to container images.
// The table is embedded (distributions.json); later layers may override entries.
package distributions

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed distributions.json
var embedded []byte

// Table maps distribution names to images.
type Table map[string]string

// Default returns a copy of the embedded table.
func Default() Table {
	t := Table{}
	if err := json.Unmarshal(embedded, &t); err != nil {
		panic(fmt.Sprintf("embedded distributions.json is invalid: %v", err))
	}
	return t
}

// Names returns the known distribution names, sorted.
func (t Table) Names() []string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Image returns the image of a distribution name, or an error listing the valid names.
func (t Table) Image(name string) (string, error) {
	if img, ok := t[name]; ok {
		return img, nil
	}
	return "", fmt.Errorf("unknown distribution %q; valid names: %s", name, strings.Join(t.Names(), ", "))
}
