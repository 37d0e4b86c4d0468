package trust

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"slices"
	"sync"
	"time"
)

// The CRs of a namespace read the same sources (its Open Data Hub bundle, the
// public roots), and an edit of one reconciles them all at once: each merge
// parses every certificate again and encodes a bundle of over 170 KiB (the public roots).
// A MergeCache remembers the last few merges, by their inputs, for a minute
// (the expiry warnings are as of the merge).
const (
	memoSize = 4
	memoTTL  = time.Minute
)

type memoEntry struct {
	key    [sha256.Size]byte
	at     time.Time
	bundle *Bundle
	err    error
}

// MergeCache is a cache of the last merges (Request.Merges); its zero value
// is empty and ready. Its owner (the CA bundle store's cache) keeps it for
// the life of the process.
type MergeCache struct {
	mu      sync.Mutex
	entries []memoEntry // most recent first
}

// merge is Merge(sources, Options{}) through the cache: a result of the same
// inputs less than memoTTL old is returned again. The Bundle is shared:
// callers do not modify it. A nil cache merges every time.
func (m *MergeCache) merge(sources []Source, now time.Time) (*Bundle, error) {
	if m == nil {
		return Merge(sources, Options{Now: now})
	}
	key := sourcesKey(sources)
	m.mu.Lock()
	for _, e := range m.entries {
		if e.key == key && now.Sub(e.at) < memoTTL && !now.Before(e.at) {
			m.mu.Unlock()
			return e.bundle, e.err
		}
	}
	m.mu.Unlock()
	// Concurrent misses of one key each merge; the results are the same.
	b, err := Merge(sources, Options{Now: now})
	m.mu.Lock()
	defer m.mu.Unlock()
	// An older result of the same inputs gives way.
	m.entries = slices.DeleteFunc(m.entries, func(e memoEntry) bool { return e.key == key })
	m.entries = slices.Insert(m.entries, 0, memoEntry{key: key, at: now, bundle: b, err: err})
	if len(m.entries) > memoSize {
		m.entries = m.entries[:memoSize]
	}
	return b, err
}

// sourcesKey digests everything Merge reads of the sources, every field
// length-prefixed so that no two inputs share a digest by concatenation.
func sourcesKey(sources []Source) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range sources {
		writeField(h, []byte(s.Name))
		if s.Strict {
			writeField(h, []byte{1})
		} else {
			writeField(h, []byte{0})
		}
		if s.Keys == nil {
			writeLen(h, -1)
		} else {
			writeLen(h, len(s.Keys))
			for _, k := range s.Keys {
				writeField(h, []byte(k))
			}
		}
		writeMap(h, s.Data)
		writeMap(h, s.BinaryData)
		writeLen(h, len(s.DER))
		for _, d := range s.DER {
			writeField(h, d)
		}
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// writeMap writes a map's entries sorted by key.
func writeMap[V string | []byte](h hash.Hash, m map[string]V) {
	writeLen(h, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		writeField(h, []byte(k))
		writeField(h, []byte(m[k]))
	}
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(int64(n)))
	h.Write(b[:])
}

func writeField(h hash.Hash, b []byte) {
	writeLen(h, len(b))
	h.Write(b)
}
