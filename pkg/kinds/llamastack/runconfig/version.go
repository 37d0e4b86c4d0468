package runconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a llama-stack release, major.minor.patch.
type Version struct {
	Major, Minor, Patch int
}

// Newest is the newest llama-stack release whose run.yaml this package
// writes; a server whose version is unknown gets its layout.
var Newest = Version{0, 7, 1}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less reports whether v is an older release than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// versionPattern is a release number: optional v, major.minor, optional
// .patch. Anything after it must not continue the number (0.2.23rc1 and
// 0.7.1-cuda are 0.2.23 and 0.7.1; 0.2.230 is not 0.2.23).
var versionPattern = regexp.MustCompile(`^v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?(?:$|[^0-9.])`)

// ParseVersion reads a release number at the start of s (e.g. 0.2.23,
// v0.7.1, 0.3, 0.2.23rc1). ok is false when s does not start with one.
func ParseVersion(s string) (v Version, ok bool) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, true
}

// ImageTag is the tag of a container image reference ("" when it has none):
// the part after the last colon of the last path segment, before any digest.
func ImageTag(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	last := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return last[i+1:]
	}
	return ""
}

// VersionSource says where the target version came from, for messages.
type VersionSource int

// Where a target version comes from.
const (
	// FromField: spec.server.config.serverVersion.
	FromField VersionSource = iota
	// FromImageTag: the distribution image's tag.
	FromImageTag
	// FromDefault: neither says it; the newest layout.
	FromDefault
)

// Target is the server version a config is rendered for, and where it came from.
type Target struct {
	Version Version
	Source  VersionSource
	// Image is the image whose tag was read (FromImageTag, FromDefault).
	Image string
}

// TargetFor chooses the version to render for: serverVersion when set (it
// wins), else the version the image's tag starts with, else Newest. A
// serverVersion that is not a version is a *status.Failure.
func TargetFor(serverVersion, image string) (Target, error) {
	if serverVersion != "" {
		v, ok := ParseVersion(serverVersion)
		if !ok || !exactVersion.MatchString(serverVersion) {
			return Target{}, fieldErrorf(".serverVersion",
				"%q is not a llama-stack version; write major.minor.patch, e.g. 0.7.1", serverVersion)
		}
		return Target{Version: v, Source: FromField}, nil
	}
	if v, ok := ParseVersion(ImageTag(image)); ok {
		return Target{Version: v, Source: FromImageTag, Image: image}, nil
	}
	return Target{Version: Newest, Source: FromDefault, Image: image}, nil
}

// exactVersion is what serverVersion must be (the CRD's pattern, more loosely).
var exactVersion = regexp.MustCompile(`^v?[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?$`)

// describe says which version is targeted and why, for messages.
func (t Target) describe() string {
	switch t.Source {
	case FromField:
		return fmt.Sprintf("llama-stack %s (%s.serverVersion)", t.Version, FieldPath)
	case FromImageTag:
		return fmt.Sprintf("llama-stack %s (the tag of image %s)", t.Version, t.Image)
	default:
		return fmt.Sprintf("llama-stack %s (the newest layout: the image's tag does not say its version)", t.Version)
	}
}

// Schema is the run.yaml layout a version reads.
func (v Version) Schema() Schema {
	if v.Less(Version{0, 3, 0}) {
		return SchemaV2
	}
	return SchemaStorage
}
