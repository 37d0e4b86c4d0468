// Package naming derives the names of Helm releases from custom resources.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxReleaseNameLength is Helm's limit on release names.
const MaxReleaseNameLength = 53

// ReleaseName is the Helm release of a CR: "<prefix>-<name>". The kind prefix
// keeps two kinds with the same CR name in one namespace from sharing a
// release. Names over Helm's 53-character limit are cut and get 8 characters
// of the name's SHA-256, so they stay valid and distinct.
func ReleaseName(prefix, name string) string {
	full := prefix + "-" + name
	if len(full) <= MaxReleaseNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := MaxReleaseNameLength - len(hash) - 1
	head := strings.TrimRight(full[:keep], "-.")
	return head + "-" + hash
}
