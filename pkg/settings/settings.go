// Package settings parses the operator's own settings: the ConfigMap an
// administrator edits (default ai-stack-operator-config in the operator's
// namespace) and RELATED_IMAGE_* environment variables, which OLM sets from
// the bundle's relatedImages for disconnected installs. Pure: no API calls.
package settings

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/distributions"
)

// Keys of the settings ConfigMap.
const (
	// KeyImageOverrides holds a YAML map of distribution name -> image.
	KeyImageOverrides = "image-overrides"
	// KeyNetworkPolicy is "enabled" (default) or "disabled".
	KeyNetworkPolicy = "network-policy"
	// KeyCrossNamespaceCABundles is "disabled" (default) or "enabled": whether
	// spec.server.tlsConfig.caBundle may name a ConfigMap of another namespace.
	KeyCrossNamespaceCABundles = "cross-namespace-ca-bundles"
	// KeyProgressDeadlineSeconds is the server Deployments' progressDeadlineSeconds:
	// how long a rollout may make no progress before it is reported stuck
	// (Kubernetes' default, 600, when unset).
	KeyProgressDeadlineSeconds = "progress-deadline-seconds"
	// RelatedImagePrefix starts the environment variables that override
	// distribution images: RELATED_IMAGE_REMOTE_VLLM for remote-vllm.
	RelatedImagePrefix = "RELATED_IMAGE_"
)

// Settings are the operator-wide settings in force.
type Settings struct {
	// Distributions maps distribution names to images, overrides applied.
	Distributions distributions.Table
	// NetworkPolicy is false when the administrator turned NetworkPolicies off.
	NetworkPolicy bool
	// CrossNamespaceCABundles is true when CRs may read CA ConfigMaps of other namespaces.
	CrossNamespaceCABundles bool
	// ProgressDeadlineSeconds of the server Deployments; 0 leaves Kubernetes' default (600).
	ProgressDeadlineSeconds int32
}

// Error is a settings problem the administrator fixes in the ConfigMap.
type Error struct {
	// Key of the ConfigMap that is wrong.
	Key string
	// Message says what is wrong and how to fix it.
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("operator settings, key %s: %s", e.Key, e.Message) }

// Reason is the condition reason for CRs that cannot be reconciled because of it.
func (e *Error) Reason() string { return "InvalidOperatorSettings" }

// EnvName is the RELATED_IMAGE_ variable of a distribution name.
func EnvName(distribution string) string {
	return RelatedImagePrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(distribution))
}

// Parse builds the settings from the embedded table, the environment
// (os.Environ form) and the ConfigMap's data (nil when it does not exist).
// Precedence for images: ConfigMap, then RELATED_IMAGE_*, then the table.
func Parse(base distributions.Table, environ []string, data map[string]string) (Settings, error) {
	s := Settings{Distributions: distributions.Table{}, NetworkPolicy: true}
	for name, img := range base {
		s.Distributions[name] = img
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, RelatedImagePrefix) && v != "" {
			env[k] = v
		}
	}
	for _, name := range base.Names() {
		if img, ok := env[EnvName(name)]; ok {
			s.Distributions[name] = img
		}
	}

	if raw, ok := data[KeyImageOverrides]; ok && strings.TrimSpace(raw) != "" {
		overrides := map[string]string{}
		if err := yaml.UnmarshalStrict([]byte(raw), &overrides); err != nil {
			return s, &Error{Key: KeyImageOverrides, Message: fmt.Sprintf("must be a YAML map of distribution name to image: %v", err)}
		}
		names := make([]string, 0, len(overrides))
		for n := range overrides {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.TrimSpace(overrides[n]) == "" {
				return s, &Error{Key: KeyImageOverrides, Message: fmt.Sprintf("the image of %q is empty", n)}
			}
			s.Distributions[n] = overrides[n]
		}
	}
	var err error
	if s.NetworkPolicy, err = switchValue(data, KeyNetworkPolicy, true); err != nil {
		return s, err
	}
	if s.CrossNamespaceCABundles, err = switchValue(data, KeyCrossNamespaceCABundles, false); err != nil {
		return s, err
	}
	if v := strings.TrimSpace(data[KeyProgressDeadlineSeconds]); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return s, &Error{Key: KeyProgressDeadlineSeconds, Message: fmt.Sprintf("must be a whole number of seconds, 1 or more, got %q", v)}
		}
		s.ProgressDeadlineSeconds = int32(n)
	}
	return s, nil
}

// switchValue reads an enabled/disabled key.
func switchValue(data map[string]string, key string, def bool) (bool, error) {
	switch v := strings.TrimSpace(data[key]); v {
	case "":
		return def, nil
	case "enabled":
		return true, nil
	case "disabled":
		return false, nil
	default:
		return def, &Error{Key: key, Message: fmt.Sprintf("must be enabled or disabled, got %q", v)}
	}
}
