package runconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name, target, patch, want string
	}{
		{"replace scalar", `{"a":1,"b":2}`, `{"a":3}`, "a: 3\nb: 2\n"},
		{"add key at the end", `{"b":1}`, `{"a":2}`, "b: 1\na: 2\n"},
		{"null removes", `{"a":1,"b":2}`, `{"a":null}`, "b: 2\n"},
		{"null of a missing key", `{"a":1}`, `{"x":null}`, "a: 1\n"},
		{"objects merge recursively", `{"a":{"x":1,"y":2}}`, `{"a":{"y":3,"z":4}}`, "a:\n  x: 1\n  \"y\": 3\n  z: 4\n"},
		{"lists replace", `{"a":[1,2,3]}`, `{"a":[4]}`, "a:\n  - 4\n"},
		{"object replaces scalar, nulls inside dropped", `{"a":1}`, `{"a":{"b":null,"c":1}}`, "a:\n  c: 1\n"},
		{"scalar replaces object", `{"a":{"b":1}}`, `{"a":"s"}`, "a: s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := parseJSON([]byte(tt.target))
			require.NoError(t, err)
			patch, err := parseJSON([]byte(tt.patch))
			require.NoError(t, err)
			mergePatch(target.(*object), patch.(*object))
			out, err := encodeYAML(target)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
		})
	}
}

func TestParseJSONKeepsNumbers(t *testing.T) {
	v, err := parseJSON([]byte(`{"big":12345678901234567890,"f":1e3,"i":7}`))
	require.NoError(t, err)
	out, err := encodeYAML(v)
	require.NoError(t, err)
	assert.Equal(t, "big: 12345678901234567890\nf: 1e3\ni: 7\n", string(out))

	_, err = parseJSON([]byte(`{} {}`))
	require.Error(t, err)
}

func TestEffectiveID(t *testing.T) {
	tests := []struct {
		in     string
		id     string
		closed bool
	}{
		{"ollama", "ollama", true},
		{"${env.OLLAMA_URL:+ollama}", "ollama", true},
		{"${env.X:=vllm}", "${env.X:=vllm}", false},
		{"${env.PROVIDER}", "${env.PROVIDER}", false},
	}
	for _, tt := range tests {
		id, ok := effectiveID(tt.in)
		assert.Equal(t, tt.id, id, tt.in)
		assert.Equal(t, tt.closed, ok, tt.in)
	}
}

// TestEncodeQuotesYAML11Ambiguities: llama-stack reads run.yaml with PyYAML
// (YAML 1.1), which takes these plain scalars for booleans, numbers or special
// keys; they must come out quoted, keys included.
func TestEncodeQuotesYAML11Ambiguities(t *testing.T) {
	for _, s := range []string{"on", "Off", "YES", "no", "y", "N", "true", "12:30", "1_000", "0755", "0x1F", "2001-12-14", "+1", ".5", "-.inf", "=", "<<", "3 apples"} {
		o := newObject()
		o.set(s, s)
		out, err := encodeYAML(o)
		require.NoError(t, err)
		assert.Equal(t, `"`+s+`": "`+s+`"`+"\n", string(out), s)
	}
	for _, s := range []string{"llama3.2:1b", "${env.VLLM_URL:=http://vllm:8000/v1}", "yES", "onion", "nope", "v1.2", "inline::faiss"} {
		o := newObject()
		o.set("k", s)
		out, err := encodeYAML(o)
		require.NoError(t, err)
		assert.Equal(t, "k: "+s+"\n", string(out), "%s stays plain", s)
	}
}
