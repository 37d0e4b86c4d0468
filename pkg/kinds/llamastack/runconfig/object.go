package runconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yaml11Ambiguous matches plain scalars that YAML 1.1 (PyYAML, which
// llama-stack reads run.yaml with) resolves to something other than a string
// while YAML 1.2 (yaml.v3) leaves them plain strings: booleans such as on and
// yes, numbers with underscores or sexagesimal colons (12:30), timestamps, and
// the value and merge keys (=, <<). Numbers in general start with a digit,
// sign or dot, so every such string is caught.
var yaml11Ambiguous = regexp.MustCompile(
	`^(?:[yY]|[yY]es|YES|[nN]o?|NO|[tT]rue|TRUE|[fF]alse|FALSE|[oO]n|ON|[oO]ff|OFF|=|<<|[-+.]?[0-9].*|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN))$`) //nolint:misspell // YAML 1.1 booleans, [fF]alse among them

// stringNode is a string scalar, double-quoted when a YAML 1.1 reader could
// take it for another type.
func stringNode(s string) *yaml.Node {
	n := &yaml.Node{}
	n.SetString(s)
	if n.Style == 0 && yaml11Ambiguous.MatchString(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// object is a JSON/YAML object that keeps its keys in the order they were
// first set. Its values are string, bool, int64, json.Number, nil, []any and
// *object; free-form input is converted with its keys sorted, so nothing
// depends on Go's map iteration order.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// set sets key to v, appending the key when it is new.
func (o *object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// setString sets key to s unless s is empty.
func (o *object) setString(key, s string) {
	if s != "" {
		o.set(key, s)
	}
}

// setObject sets key to v unless v is nil or empty.
func (o *object) setObject(key string, v *object) {
	if v != nil && len(v.keys) > 0 {
		o.set(key, v)
	}
}

// setList sets key to l unless l is empty.
func (o *object) setList(key string, l []any) {
	if len(l) > 0 {
		o.set(key, l)
	}
}

func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

func (o *object) delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
}

// parseJSON decodes a JSON value, numbers kept exact, objects as *object with
// sorted keys.
func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return fromGo(v), nil
}

func fromGo(v any) any {
	switch t := v.(type) {
	case map[string]any:
		o := newObject()
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			o.set(k, fromGo(t[k]))
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromGo(e)
		}
		return out
	default:
		return v
	}
}

// jsonKind names the kind of a parsed JSON value, for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// mergePatch applies patch to target as JSON merge patch (RFC 7386): objects
// merge key by key, null removes the key, any other value replaces it.
func mergePatch(target, patch *object) {
	for _, k := range patch.keys {
		pv := patch.vals[k]
		if pv == nil {
			target.delete(k)
			continue
		}
		po, ok := pv.(*object)
		if !ok {
			target.set(k, pv)
			continue
		}
		to, ok := target.vals[k].(*object)
		if !ok {
			to = newObject()
		}
		mergePatch(to, po)
		target.set(k, to)
	}
}

// encodeYAML encodes v as YAML, two-space indented.
func encodeYAML(v any) ([]byte, error) {
	n, err := toNode(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	return buf.Bytes(), nil
}

func toNode(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case *object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range t.keys {
			kn := stringNode(k)
			vn, err := toNode(t.vals[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.Content = append(n.Content, kn, vn)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, e := range t {
			en, err := toNode(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			n.Content = append(n.Content, en)
		}
		return n, nil
	case string:
		return stringNode(t), nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(t, 10)}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	default:
		return nil, fmt.Errorf("unsupported value of type %T", v)
	}
}

// shape is the key order of a known object: its known keys first, in order,
// then the others sorted. Applied to a list, it orders each item.
type shape struct {
	keys  []string          // known keys, in order
	field map[string]*shape // shape of a known key's value
	each  *shape            // shape of every value, when field has none
}

// apply orders v by s; values without a shape are free-form and get their
// keys sorted, at every depth.
func (s *shape) apply(v any) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			s.apply(e)
		}
	case *object:
		rank := make(map[string]int, len(s.keys))
		for i, k := range s.keys {
			rank[k] = i
		}
		slices.SortStableFunc(t.keys, func(a, b string) int {
			ra, aKnown := rank[a]
			rb, bKnown := rank[b]
			switch {
			case aKnown && bKnown:
				return ra - rb
			case aKnown:
				return -1
			case bKnown:
				return 1
			default:
				return strings.Compare(a, b)
			}
		})
		for _, k := range t.keys {
			child := s.field[k]
			if child == nil {
				child = s.each
			}
			if child == nil {
				child = freeFormShape
			}
			child.apply(t.vals[k])
		}
	}
}

// freeFormShape sorts every key, at every depth.
var freeFormShape = &shape{}

func init() { freeFormShape.each = freeFormShape }
