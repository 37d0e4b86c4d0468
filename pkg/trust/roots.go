package trust

import (
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

var (
	publicRootsOnce sync.Once
	publicRoots     [][]byte
)

// PublicRoots are Mozilla's roots as golang.org/x/crypto's fallback bundle
// ships them, in DER, without the roots that carry constraints a PEM bundle
// cannot express (distrust-after dates). The slice is shared: do not modify it.
func PublicRoots() [][]byte {
	publicRootsOnce.Do(func() {
		for r := range bundle.Roots() {
			if r.Constraint == nil {
				publicRoots = append(publicRoots, r.Certificate)
			}
		}
	})
	return publicRoots
}
