package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxReleaseNameLength is Helm's limit on release names.
const MaxReleaseNameLength = 53

// releaseHashBytes is how much of a SHA-256 a long CR's release name keeps:
// 128 bits, so that no search finds two CRs with one release.
const releaseHashBytes = 16

// ReleaseName is the Helm release of a CR. Every release is stored in the
// operator's namespace, so its name must identify the CR among every kind
// and namespace; a record found under it is the CR's (the records driver
// checks its owner labels too, pkg/release).
//
// When it fits Helm's 53 characters it is "<prefix>-<namespace>.<name>":
// prefixes have no dash or dot and namespaces no dot, so the name spells the
// CR exactly and no two CRs share it. A longer one is "<prefix>-<head>-<hash>"
// with 32 hex characters (128 bits) of the SHA-256 of
// "<prefix>/<namespace>/<name>" and, for people, as much of
// "<namespace>-<name>" as fits before it: it has no dot, so it is never the
// short name of another CR, and finding two CRs with the same hash is out of
// reach. (Earlier versions cut long names and kept 32 bits of a hash, which a
// search finds in a minute: LegacyReleaseName.)
func ReleaseName(prefix, namespace, name string) string {
	full := prefix + "-" + namespace + "." + name
	if len(full) <= MaxReleaseNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(prefix + "/" + namespace + "/" + name))
	hash := hex.EncodeToString(sum[:releaseHashBytes])
	room := MaxReleaseNameLength - len(prefix) - len(hash) - 2
	head := strings.ReplaceAll(namespace+"-"+name, ".", "-")
	if len(head) > room {
		head = head[:room]
	}
	head = strings.Trim(head, "-")
	if head == "" {
		return prefix + "-" + hash
	}
	return prefix + "-" + head + "-" + hash
}

// LegacyReleaseName is the release name earlier versions gave a CR: the same
// as ReleaseName when that fits, otherwise cut to 44 characters with 8 hex
// characters (32 bits) of the SHA-256 of "namespace/name". The operator reads
// records stored under it only to move them to ReleaseName, and only when
// they carry the CR's UID.
func LegacyReleaseName(prefix, namespace, name string) string {
	full := prefix + "-" + namespace + "." + name
	if len(full) <= MaxReleaseNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := MaxReleaseNameLength - len(hash) - 1
	head := strings.TrimRight(full[:keep], "-.")
	return head + "-" + hash
}

// maxLabelValue is the limit on a label's value.
const maxLabelValue = 63

// NameLabel is a CR's name as a label value: the name itself when it fits
// (CR names are DNS subdomains, which are valid label values), otherwise "H"
// and 62 hex characters of its SHA-256. CR names are lower case, so the
// second form is never a name.
func NameLabel(name string) string {
	if len(name) <= maxLabelValue {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "H" + hex.EncodeToString(sum[:])[:maxLabelValue-1]
}
