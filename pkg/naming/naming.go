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

// MaxChildNameLength is the limit on the names of objects derived from a CR
// (a DNS label: Services, and labels holding the name).
const MaxChildNameLength = 63

// ChildName is the name of an object derived from a CR: name+suffix, or,
// when that exceeds 63 characters, the name cut, "-", 8 characters of the
// name's SHA-256, and the suffix. The charts' "childName" helpers compute the
// same (tested against each other).
func ChildName(name, suffix string) string {
	if len(name)+len(suffix) <= MaxChildNameLength {
		return name + suffix
	}
	keep := MaxChildNameLength - (len(suffix) + 9)
	head := name
	if len(head) > keep {
		head = head[:keep]
	}
	head = strings.TrimSuffix(strings.TrimSuffix(head, "-"), ".")
	sum := sha256.Sum256([]byte(name))
	return head + "-" + hex.EncodeToString(sum[:])[:8] + suffix
}
