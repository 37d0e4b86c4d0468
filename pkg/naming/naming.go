// Package naming derives the names of Helm releases and of child objects
// from custom resources, kind-neutrally; each kind lists its children's
// names in one place (pkg/kinds/<kind>/names.go) and tests them against a
// render of its chart.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// MaxChildNameLength is the limit on the names of objects derived from a CR
// (a DNS label: Services, and labels holding the name).
const MaxChildNameLength = 63

// ChildName is the name of an object derived from a CR: name+suffix, or,
// when that exceeds 63 characters, the name cut, "-", 8 characters of the
// name's SHA-256, and the suffix. The charts' "childName" helpers compute the
// same (each kind's TestNamesMatchTheChart renders its chart to check).
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

// dns1035 is a DNS-1035 label's shape (length aside).
var dns1035 = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// ServiceName is the name of a Service derived from a CR: ChildName(name,
// suffix) when the name can start a DNS-1035 label (Service names must be
// one; CR names are DNS subdomains, which may hold dots and start with a
// digit). Otherwise the dots become dashes, "s-" goes before a leading digit,
// and 8 characters of the name's SHA-256 keep the result distinct. The
// charts' "serviceName" helpers compute the same.
func ServiceName(name, suffix string) string {
	if dns1035.MatchString(name) {
		return ChildName(name, suffix)
	}
	s := strings.ReplaceAll(name, ".", "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "s-" + s
	}
	keep := MaxChildNameLength - len(suffix) - 9
	if len(s) > keep {
		s = s[:keep]
	}
	s = strings.TrimSuffix(s, "-")
	sum := sha256.Sum256([]byte(name))
	return s + "-" + hex.EncodeToString(sum[:])[:8] + suffix
}
