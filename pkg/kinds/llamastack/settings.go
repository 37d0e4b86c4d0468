package llamastack

import (
	"maps"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// UpstreamConfigMap is the ConfigMap llama-stack-k8s-operator reads in its
// namespace; this operator reads it in its own namespace too, below its
// own settings, so that a switching administrator's settings keep working:
// key featureFlags (YAML: enableNetworkPolicy.enabled, default false) and
// key image-overrides (YAML map: distribution name -> image).
const UpstreamConfigMap = "llama-stack-operator-config"

// The keys of UpstreamConfigMap that are read.
const (
	UpstreamKeyFeatureFlags   = "featureFlags"
	UpstreamKeyImageOverrides = "image-overrides"
)

// The keys of the operator's settings ConfigMap that concern LlamaStackDistributions.
const (
	// KeyImageOverrides holds a YAML map of distribution name -> image.
	KeyImageOverrides = "image-overrides"
	// KeyNetworkPolicy is "enabled" or "disabled"; unset, upstream's
	// featureFlags decide, and they default to disabled.
	KeyNetworkPolicy = "network-policy"
	// KeyAnyUID is "disabled" (default) or "enabled": whether each server's
	// ServiceAccount is bound to OpenShift's anyuid SCC (<name>-rb, as
	// upstream renders it) and its pods run as upstream's do (fsGroup 1001,
	// the image's user). Off: pods run restricted (no binding needed).
	KeyAnyUID = "anyuid-role-binding"
	// KeyCrossNamespaceCABundles is "disabled" (default) or "enabled": whether
	// spec.server.tlsConfig.caBundle may name a ConfigMap of another namespace.
	KeyCrossNamespaceCABundles = "cross-namespace-ca-bundles"
	// KeyProgressDeadlineSeconds is the kind-neutral settings.KeyProgressDeadlineSeconds.
	KeyProgressDeadlineSeconds = settings.KeyProgressDeadlineSeconds
)

// Settings are the operator-wide settings in force for LlamaStackDistributions.
type Settings struct {
	// Distributions maps distribution names to images, overrides applied.
	Distributions distributions.Table
	// NetworkPolicy is true when the administrator turned NetworkPolicies on.
	NetworkPolicy bool
	// AnyUID is true when servers are bound to the anyuid SCC on OpenShift.
	AnyUID bool
	// CrossNamespaceCABundles is true when CRs may read CA ConfigMaps of other namespaces.
	CrossNamespaceCABundles bool
	// ProgressDeadlineSeconds of the server Deployments; 0 leaves Kubernetes' default (600).
	ProgressDeadlineSeconds int32
}

// ParseSettings builds the settings from the distribution table, the
// environment (os.Environ form), the settings ConfigMap's data and
// upstream's ConfigMap's data (UpstreamConfigMap; each nil when it does not
// exist). Precedence for images: the settings ConfigMap, then upstream's
// image-overrides (an administrator's explicit choice beats the
// RELATED_IMAGE_* that OLM always sets), then RELATED_IMAGE_<NAME>, then
// the table. For the
// NetworkPolicy: the settings key, then upstream's featureFlags, then off
// (upstream's default). Problems are *status.Failure with reason
// InvalidOperatorSettings, naming the ConfigMap's key.
func ParseSettings(base distributions.Table, environ []string, data, upstream map[string]string) (Settings, error) {
	var s Settings
	var err error
	withEnv, err := settings.Images(base, environ, nil, KeyImageOverrides, "distribution")
	if err != nil {
		return s, err
	}
	s.Distributions, err = settings.Images(upstreamImages(withEnv, upstream), nil, data, KeyImageOverrides, "distribution")
	if err != nil {
		return s, err
	}
	upstreamPolicy, err := upstreamNetworkPolicy(upstream)
	if err != nil {
		return s, err
	}
	if s.NetworkPolicy, err = settings.Switch(data, KeyNetworkPolicy, upstreamPolicy); err != nil {
		return s, err
	}
	if s.AnyUID, err = settings.Switch(data, KeyAnyUID, false); err != nil {
		return s, err
	}
	if s.CrossNamespaceCABundles, err = settings.Switch(data, KeyCrossNamespaceCABundles, false); err != nil {
		return s, err
	}
	if s.ProgressDeadlineSeconds, err = settings.Seconds(data, KeyProgressDeadlineSeconds); err != nil {
		return s, err
	}
	return s, nil
}

// upstreamNetworkPolicy reads featureFlags of upstream's ConfigMap as
// upstream does: YAML whose enableNetworkPolicy.enabled is a boolean, other
// keys ignored, absent means false.
func upstreamNetworkPolicy(upstream map[string]string) (bool, error) {
	raw, ok := upstream[UpstreamKeyFeatureFlags]
	if !ok || strings.TrimSpace(raw) == "" {
		return false, nil
	}
	var flags struct {
		EnableNetworkPolicy struct {
			Enabled bool `json:"enabled"`
		} `json:"enableNetworkPolicy"`
	}
	if err := yaml.Unmarshal([]byte(raw), &flags); err != nil {
		f := settings.Invalid(UpstreamKeyFeatureFlags, "must be YAML such as \"enableNetworkPolicy: {enabled: true}\" (upstream's operator refuses to start on it): %v", err)
		f.Field = "ConfigMap " + UpstreamConfigMap + ", key " + UpstreamKeyFeatureFlags
		return false, f
	}
	return flags.EnableNetworkPolicy.Enabled, nil
}

// upstreamImages is base with the image-overrides of upstream's ConfigMap
// applied, read as upstream reads them: a value that is no YAML map is
// ignored whole, an entry without an image is skipped.
func upstreamImages(base distributions.Table, upstream map[string]string) distributions.Table {
	out := maps.Clone(base)
	var overrides map[string]string
	if err := yaml.Unmarshal([]byte(upstream[UpstreamKeyImageOverrides]), &overrides); err != nil {
		return out
	}
	for name, image := range overrides {
		if image = strings.TrimSpace(image); image != "" && !strings.ContainsAny(image, " \t\n") {
			if out == nil {
				out = distributions.Table{}
			}
			out[name] = image
		}
	}
	return out
}
