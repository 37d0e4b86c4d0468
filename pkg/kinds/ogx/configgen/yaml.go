package configgen

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseBase decodes the base config: a YAML map with a scalar, non-empty
// version, returned as text (2 and '2' both give "2"). Aliases and merge keys
// are resolved and duplicate keys refused by the decoder.
func parseBase(data []byte) (map[string]any, string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "", baseInvalid("it is empty")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, "", baseInvalid("it is not YAML (%v)", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, "", baseInvalid("it is not a YAML map")
	}
	root := doc.Content[0]
	yaml11(root, map[*yaml.Node]bool{})
	var base map[string]any
	if err := root.Decode(&base); err != nil {
		return nil, "", baseInvalid("it cannot be read (%v)", err)
	}
	var version string
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "version" {
			v := root.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
				return nil, "", baseInvalid("its version is not a number or a string")
			}
			version = strings.TrimSpace(v.Value)
		}
	}
	if version == "" {
		// A version brought in by a merge key (<<) is not in root.Content.
		switch v := base["version"].(type) {
		case string:
			version = strings.TrimSpace(v)
		case int:
			version = strconv.Itoa(v)
		}
	}
	if version == "" {
		return nil, "", baseInvalid("it has no version (e.g. version: 2)")
	}
	return base, version, nil
}

// yaml11 retags the plain scalars that YAML 1.1 (the server's PyYAML)
// reads otherwise than this YAML 1.2 decoder: yes/no/on/off are booleans,
// 1:20 is a (base 60) number, and 1e6 (no '.') and 0o17 are strings.
func yaml11(n *yaml.Node, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	if n.Kind == yaml.ScalarNode && n.Style == 0 {
		switch n.Tag {
		case "!!str":
			switch n.Value {
			case "yes", "Yes", "YES", "on", "On", "ON":
				n.Tag, n.Value = "!!bool", "true"
			case "no", "No", "NO", "off", "Off", "OFF":
				n.Tag, n.Value = "!!bool", "false"
			default:
				if tag, value, ok := sexagesimal(n.Value); ok {
					n.Tag, n.Value = tag, value
				}
			}
		case "!!int":
			if strings.HasPrefix(strings.TrimLeft(n.Value, "+-"), "0o") {
				n.Tag = "!!str"
			}
		case "!!float":
			if !yaml11Float.MatchString(n.Value) {
				n.Tag = "!!str"
			}
		}
	}
	yaml11(n.Alias, seen)
	for _, c := range n.Content {
		yaml11(c, seen)
	}
}

// yaml11Float is PyYAML's float pattern.
var yaml11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)

// yaml11Sexagesimal is PyYAML's base 60 int and float patterns.
var yaml11Sexagesimal = regexp.MustCompile(`^([-+]?)([0-9][0-9_]*(?::[0-5]?[0-9])+)(\.[0-9_]*)?$`)

// sexagesimal returns the tag and the decimal value of a YAML 1.1 base 60
// number (1:20 is 80, 1:20.5 is 80.5).
func sexagesimal(s string) (string, string, bool) {
	m := yaml11Sexagesimal.FindStringSubmatch(s)
	if m == nil || (m[3] == "" && strings.HasPrefix(m[2], "0")) {
		return "", "", false
	}
	var v int64
	for _, part := range strings.Split(strings.ReplaceAll(m[2], "_", ""), ":") {
		d, err := strconv.ParseInt(part, 10, 64)
		if err != nil || v > (math.MaxInt64-d)/60 {
			return "", "", false
		}
		v = v*60 + d
	}
	if m[3] == "" {
		return "!!int", m[1] + strconv.FormatInt(v, 10), true
	}
	frac := strings.ReplaceAll(m[3], "_", "")
	if frac == "." {
		frac = ".0"
	}
	return "!!float", m[1] + strconv.FormatInt(v, 10) + frac, true
}

// asMap returns a decoded YAML map with string keys.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			s, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[s] = v
		}
		return out, true
	}
	return nil, false
}

// marshal encodes the config: map keys sorted, 2-space indent, floats
// always written with a '.' so that YAML 1.1 readers (the server's PyYAML)
// read them as floats.
func marshal(config map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(floats(config)); err != nil {
		return nil, fmt.Errorf("encoding the generated config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding the generated config: %w", err)
	}
	return buf.Bytes(), nil
}

// floats returns v with every float64 turned into a pyFloat, copying the
// maps and lists it goes through (the base's values are shared).
func floats(v any) any {
	switch t := v.(type) {
	case float64:
		return pyFloat(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[k] = floats(v)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(t))
		for k, v := range t {
			out[k] = floats(v)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = floats(v)
		}
		return out
	}
	return v
}

// pyFloat is a float written so that YAML 1.1 reads it back as a float:
// 60 is written 60.0 and 1e+06 is written 1.0e+06.
type pyFloat float64

// MarshalYAML implements yaml.Marshaler.
func (f pyFloat) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: formatFloat(float64(f))}, nil
}

// formatFloat formats f as a YAML 1.1 float.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}
