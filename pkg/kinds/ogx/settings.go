package ogx

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// UpstreamConfigMap is the ConfigMap ogx-k8s-operator reads in its
// namespace (key image-overrides: a YAML map of distribution name ->
// image); this operator reads it in its own namespace too, below its own
// settings, so that a switching administrator's overrides keep working.
const UpstreamConfigMap = "ogx-operator-config"

// The keys this kind reads.
const (
	// UpstreamKeyImageOverrides is the key of UpstreamConfigMap.
	UpstreamKeyImageOverrides = "image-overrides"
	// KeyImageOverrides, in the operator's settings, holds a YAML map of
	// OGX distribution name -> image (a key of its own: the older kind's
	// distributions have the same names and other images).
	KeyImageOverrides = "ogx-image-overrides"
	// KeyAnyUID and KeyCrossNamespaceCABundles are shared with the other
	// server kind: "enabled" or "disabled" (default).
	KeyAnyUID = "anyuid-role-binding"
	// KeyProgressDeadlineSeconds is the kind-neutral settings key.
	KeyProgressDeadlineSeconds = settings.KeyProgressDeadlineSeconds
	// RelatedImagePrefix starts the environment variables that pin a
	// distribution's image (RELATED_IMAGE_OGX_STARTER), as OLM sets them.
	RelatedImagePrefix = "RELATED_IMAGE_OGX_"
)

// distributions is upstream's table (distributions.json at 1784464).
var distributions = map[string]string{
	"starter":            "docker.io/ogxai/distribution-starter:latest",
	"remote-vllm":        "docker.io/ogxai/distribution-remote-vllm:latest",
	"meta-reference-gpu": "docker.io/ogxai/distribution-meta-reference-gpu:latest",
	"postgres-demo":      "docker.io/ogxai/distribution-postgres-demo:latest",
}

// Distributions returns a copy of the distribution table.
func Distributions() map[string]string { return maps.Clone(distributions) }

// ogxImages are the distributions' images by related-image name: they share
// names with the older kind's, so each is ogx-<name> (RELATED_IMAGE_OGX_<NAME>).
func ogxImages() map[string]string {
	out := map[string]string{}
	for name, img := range distributions {
		out["ogx-"+name] = img
	}
	return out
}

// Settings are the operator-wide settings in force for OGXServers.
type Settings struct {
	// Distributions maps distribution names to images, overrides applied.
	Distributions map[string]string
	// AnyUID is true when servers are bound to the anyuid SCC on OpenShift.
	AnyUID bool
	// ProgressDeadlineSeconds of the server Deployments; 0 leaves Kubernetes' default.
	ProgressDeadlineSeconds int32
}

// ParseSettings builds the settings from the environment (os.Environ
// form), the settings ConfigMap's data and upstream's ConfigMap's data
// (each nil when it does not exist). Images, by precedence: the settings
// key, upstream's image-overrides, RELATED_IMAGE_OGX_<NAME>, the table.
// Problems are *status.Failure with reason InvalidOperatorSettings.
func ParseSettings(environ []string, data, upstream map[string]string) (Settings, error) {
	s := Settings{Distributions: Distributions()}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" || !strings.HasPrefix(k, RelatedImagePrefix) {
			continue
		}
		for name := range distributions {
			if k == relatedImage(name) {
				s.Distributions[name] = v
			}
		}
	}
	upstreamImages(s.Distributions, upstream)
	var err error
	if s.Distributions, err = settings.Images(s.Distributions, nil, data, KeyImageOverrides, "OGX distribution"); err != nil {
		return s, err
	}
	if s.AnyUID, err = settings.Switch(data, KeyAnyUID, false); err != nil {
		return s, err
	}
	if s.ProgressDeadlineSeconds, err = settings.Seconds(data, KeyProgressDeadlineSeconds); err != nil {
		return s, err
	}
	return s, nil
}

// relatedImage is the environment variable that pins a distribution's image.
func relatedImage(name string) string {
	return RelatedImagePrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// upstreamImages applies the image-overrides of upstream's ConfigMap as
// upstream reads them: only names of the table, an entry without a
// plausible image skipped, a value that is no YAML map ignored whole.
func upstreamImages(table, upstream map[string]string) {
	var overrides map[string]string
	if err := yaml.Unmarshal([]byte(upstream[UpstreamKeyImageOverrides]), &overrides); err != nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		image := strings.TrimSpace(overrides[name])
		if _, known := table[name]; known && image != "" && !strings.ContainsAny(image, " \t\n") {
			table[name] = image
		}
	}
}

// imageOf resolves spec.distribution to an image.
func imageOf(name, image string, table map[string]string) (string, error) {
	if image != "" {
		return image, nil
	}
	if img, ok := table[name]; ok {
		return img, nil
	}
	names := slices.Sorted(maps.Keys(table))
	return "", fmt.Errorf("unknown distribution %q; available distributions: %s", name, strings.Join(names, ", "))
}
