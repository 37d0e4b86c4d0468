package trust

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContentHash(t *testing.T) {
	base := ContentHash(map[string]string{"a": "x", "b": "y"}, map[string][]byte{"c": []byte("z")})
	tests := []struct {
		name       string
		data       map[string]string
		binaryData map[string][]byte
		same       bool // same hash as base
	}{
		{"same content", map[string]string{"a": "x", "b": "y"}, map[string][]byte{"c": []byte("z")}, true},
		{"keys inserted in another order", map[string]string{"b": "y", "a": "x"}, map[string][]byte{"c": []byte("z")}, true},
		{"a value changes", map[string]string{"a": "x", "b": "Y"}, map[string][]byte{"c": []byte("z")}, false},
		{"values swap keys", map[string]string{"a": "y", "b": "x"}, map[string][]byte{"c": []byte("z")}, false},
		{"a key is renamed", map[string]string{"a": "x", "bb": "y"}, map[string][]byte{"c": []byte("z")}, false},
		{"a value moves to binaryData", map[string]string{"a": "x", "b": "y", "c": "z"}, nil, false},
		{"bytes move between key and value", map[string]string{"a": "x", "b": "y"}, map[string][]byte{"cz": nil}, false},
		{"an empty key is added", map[string]string{"a": "x", "b": "y", "e": ""}, map[string][]byte{"c": []byte("z")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ContentHash(tc.data, tc.binaryData)
			assert.Len(t, got, 64)
			if tc.same {
				assert.Equal(t, base, got)
			} else {
				assert.NotEqual(t, base, got)
			}
		})
	}
}

func TestContentHashDataVersusBinaryData(t *testing.T) {
	assert.NotEqual(t,
		ContentHash(map[string]string{"ca.crt": "pem"}, nil),
		ContentHash(nil, map[string][]byte{"ca.crt": []byte("pem")}))
}

func TestContentHashAmbiguousConcatenation(t *testing.T) {
	// Without length prefixes these would both hash "abc".
	assert.NotEqual(t,
		ContentHash(map[string]string{"a": "bc"}, nil),
		ContentHash(map[string]string{"ab": "c"}, nil))
}

func TestContentHashEmpty(t *testing.T) {
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	assert.Equal(t, emptySHA256, ContentHash(nil, nil))
	assert.Equal(t, emptySHA256, ContentHash(map[string]string{}, map[string][]byte{}))
}

func TestContentHashStable(t *testing.T) {
	// A fixed value, computed independently (Python: sha256 of
	// "d" + u64be(6) + "ca.crt" + u64be(1) + "x" + "b" + u64be(1) + "b" + u64be(1) + 0x00).
	// Changing the encoding would roll every pod.
	assert.Equal(t, "27e00a0fd1fe0da91002b82c31fa47b4141e10aa1ebc3865d4ae0903512f0bf8",
		ContentHash(map[string]string{"ca.crt": "x"}, map[string][]byte{"b": {0}}))
}
