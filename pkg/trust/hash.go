package trust

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
)

// ContentHash returns the hex SHA-256 of the content of a ConfigMap (or
// Secret): its data and binaryData, never its metadata, so label or
// annotation edits do not change it.
//
// Entries are hashed in sorted key order, data first, each encoded
// unambiguously as a type tag ("d" or "b"), then the key and the value, each
// prefixed with its length as a big-endian uint64. So map order does not
// matter, while moving a value to another key, or between data and
// binaryData, changes the hash. Empty and nil maps hash like each other.
func ContentHash(data map[string]string, binaryData map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		writeEntry(h, 'd', k, []byte(data[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(binaryData)) {
		writeEntry(h, 'b', k, binaryData[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeEntry(h hash.Hash, tag byte, key string, value []byte) {
	var n [8]byte
	h.Write([]byte{tag})
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write([]byte(key))
	binary.BigEndian.PutUint64(n[:], uint64(len(value)))
	h.Write(n[:])
	h.Write(value)
}
