package nemoguardrails

import (
	"context"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// The keys and variables of the server's image: upstream's
// (controllers/images/resolver.go), so that an existing operator
// ConfigMap or OLM's RELATED_IMAGE_ carries over. kube-rbac-proxy's image
// is TrustyAIService's (trustyaifamily.KeyProxyImage).
const (
	KeyImage     = "nemo-guardrails-image"
	EnvImage     = "RELATED_IMAGE_ODH_TRUSTYAI_NEMO_GUARDRAILS_SERVER_IMAGE"
	DefaultImage = "quay.io/trustyai/nemo-guardrails-server:latest"
	// KeyCrossNamespaceCABundles is the server kinds' switch ("enabled" or
	// "disabled", the default) for CA ConfigMaps of other namespaces.
	KeyCrossNamespaceCABundles = "cross-namespace-ca-bundles"
)

// Settings are the operator-wide settings in force for NemoGuardrails.
type Settings struct {
	Image, ProxyImage string
	// ProgressDeadlineSeconds of the Deployments (the kind-neutral key).
	ProgressDeadlineSeconds int32
	// IngressDomain and IngressClass: TrustyAIService's Ingress settings.
	IngressDomain, IngressClass string
	// CrossNamespaceCABundles lets spec.caBundleConfig name another
	// namespace (the server kinds' setting).
	CrossNamespaceCABundles bool
}

// ParseSettings reads the settings from the environment (os.Environ form),
// the settings ConfigMap's data and upstream's ConfigMap's data (each nil
// when it does not exist). Images: our key, the RELATED_IMAGE_ variable,
// upstream's key, the default (TrustyAIService's order).
func ParseSettings(environ []string, data, upstream map[string]string) (Settings, error) {
	s := Settings{
		Image:      settings.Image(data, KeyImage, environ, EnvImage, settings.Image(upstream, KeyImage, nil, "", DefaultImage)),
		ProxyImage: trustyaifamily.ProxyImage(environ, data, upstream),
	}
	var err error
	if s.ProgressDeadlineSeconds, err = settings.Seconds(data, settings.KeyProgressDeadlineSeconds); err != nil {
		return s, err
	}
	if s.IngressDomain, s.IngressClass, err = trustyaifamily.IngressSettings(data); err != nil {
		return s, err
	}
	if s.CrossNamespaceCABundles, err = settings.Switch(data, KeyCrossNamespaceCABundles, false); err != nil {
		return s, err
	}
	return s, nil
}

// settings reads the operator's settings and upstream's ConfigMap.
func (k *Kind) settings(ctx context.Context) (Settings, error) {
	data, upstream, err := trustyaifamily.SettingsData(ctx, k.Deps)
	if err != nil {
		return Settings{}, err
	}
	return ParseSettings(k.Env(), data, upstream)
}
