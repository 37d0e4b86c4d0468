package llamastack

import (
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// The keys of the operator's settings ConfigMap that concern LlamaStackDistributions.
const (
	// KeyImageOverrides holds a YAML map of distribution name -> image.
	KeyImageOverrides = "image-overrides"
	// KeyNetworkPolicy is "enabled" (default) or "disabled".
	KeyNetworkPolicy = "network-policy"
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
	// NetworkPolicy is false when the administrator turned NetworkPolicies off.
	NetworkPolicy bool
	// CrossNamespaceCABundles is true when CRs may read CA ConfigMaps of other namespaces.
	CrossNamespaceCABundles bool
	// ProgressDeadlineSeconds of the server Deployments; 0 leaves Kubernetes' default (600).
	ProgressDeadlineSeconds int32
}

// ParseSettings builds the settings from the distribution table, the
// environment (os.Environ form) and the settings ConfigMap's data (nil when
// it does not exist). Precedence for images: ConfigMap, then
// RELATED_IMAGE_<NAME>, then the table. Problems are *status.Failure with
// reason InvalidOperatorSettings, naming the key.
func ParseSettings(base distributions.Table, environ []string, data map[string]string) (Settings, error) {
	s := Settings{NetworkPolicy: true}
	images, err := settings.Images(base, environ, data, KeyImageOverrides, "distribution")
	s.Distributions = images
	if err != nil {
		return s, err
	}
	if s.NetworkPolicy, err = settings.Switch(data, KeyNetworkPolicy, true); err != nil {
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
