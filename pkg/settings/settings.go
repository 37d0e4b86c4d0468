// Package settings reads the operator's own settings, kind by kind: the
// ConfigMap an administrator edits (default ai-stack-operator-config in the
// operator's namespace) and RELATED_IMAGE_* environment variables, which OLM
// sets from the bundle's relatedImages for disconnected installs. Each kind
// declares and reads its own keys with these helpers, so that a bad key is
// reported (InvalidOperatorSettings) only on the CRs of the kinds it
// concerns. Pure: no API calls.
package settings

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// RelatedImagePrefix starts the environment variables that override images:
// RELATED_IMAGE_REMOTE_VLLM for the image named remote-vllm.
const RelatedImagePrefix = "RELATED_IMAGE_"

// Invalid is the failure of a settings key, which the administrator fixes in
// the ConfigMap; its message names the key.
func Invalid(key, format string, args ...any) *status.Failure {
	return &status.Failure{Reason: status.ReasonInvalidOperatorSettings, Field: "operator settings, key " + key, Message: fmt.Sprintf(format, args...)}
}

// EnvName is the RELATED_IMAGE_ variable of an image name.
func EnvName(name string) string {
	return RelatedImagePrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// Images returns base with overrides applied, by precedence: the YAML map
// of name -> image under key in data, then RELATED_IMAGE_<NAME> from environ
// (os.Environ form), then base. Names the map adds to base are kept. what
// says what the names name, for messages ("distribution").
func Images(base map[string]string, environ []string, data map[string]string, key, what string) (map[string]string, error) {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, RelatedImagePrefix) && v != "" {
			env[k] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(base)) {
		if img, ok := env[EnvName(name)]; ok {
			out[name] = img
		}
	}
	raw, ok := data[key]
	if !ok || strings.TrimSpace(raw) == "" {
		return out, nil
	}
	overrides := map[string]string{}
	if err := yaml.UnmarshalStrict([]byte(raw), &overrides); err != nil {
		return out, Invalid(key, "must be a YAML map of %s name to image: %v", what, err)
	}
	for _, n := range slices.Sorted(maps.Keys(overrides)) {
		if strings.TrimSpace(overrides[n]) == "" {
			return out, Invalid(key, "the image of %q is empty", n)
		}
		out[n] = overrides[n]
	}
	return out, nil
}

// Switch reads an enabled/disabled key; def when it is unset.
func Switch(data map[string]string, key string, def bool) (bool, error) {
	switch v := strings.TrimSpace(data[key]); v {
	case "":
		return def, nil
	case "enabled":
		return true, nil
	case "disabled":
		return false, nil
	default:
		return def, Invalid(key, "must be enabled or disabled, got %q", v)
	}
}

// Seconds reads a whole number of seconds, 1 or more; 0 when it is unset.
func Seconds(data map[string]string, key string) (int32, error) {
	v := strings.TrimSpace(data[key])
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, Invalid(key, "must be a whole number of seconds, 1 or more, got %q", v)
	}
	return int32(n), nil
}

// KeyProgressDeadlineSeconds is every kind's Deployments'
// progressDeadlineSeconds: how long a rollout may make no progress before it
// is reported stuck (Kubernetes' default, 600, when unset).
const KeyProgressDeadlineSeconds = "progress-deadline-seconds"

// Image is one image: data's key (trimmed), then the environment variable
// env from environ (os.Environ form), then def.
func Image(data map[string]string, key string, environ []string, env, def string) string {
	if v := strings.TrimSpace(data[key]); v != "" {
		return v
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == env && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return def
}

// KindName reads "Kind/name" with one of the given kinds; empty when unset.
func KindName(data map[string]string, key string, kinds ...string) (kind, name string, err error) {
	v := strings.TrimSpace(data[key])
	if v == "" {
		return "", "", nil
	}
	kind, name, ok := strings.Cut(v, "/")
	if !ok || !slices.Contains(kinds, kind) || name == "" || strings.ContainsAny(name, "/ \t\n") {
		return "", "", Invalid(key, "must be %s/<name>, got %q", strings.Join(kinds, "/<name> or "), v)
	}
	return kind, name, nil
}
