package trustyai

import (
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// The keys of the operator's settings ConfigMap that concern
// TrustyAIServices: upstream's names, so that an existing operator
// ConfigMap's values carry over.
const (
	// KeyServiceImage is the TrustyAI service's image.
	KeyServiceImage = "trustyaiServiceImage"
	// KeyProxyImage is kube-rbac-proxy's image.
	KeyProxyImage = "kube-rbac-proxy"
	// KeyCertManagerIssuer names the cert-manager issuer of the serving
	// certificates as Kind/name (Issuer/ca or ClusterIssuer/ca); a
	// self-signed Issuer per service when unset.
	KeyCertManagerIssuer = "trustyai-cert-manager-issuer"
	// KeyServerless ("enabled" or "disabled", the default; upstream's key)
	// points Serverless InferenceServices at the service too.
	KeyServerless = "kServeServerless"
	// KeyWiring ("enabled", the default, or "disabled") switches the
	// model-server wiring: the one place the operator writes objects it did
	// not create.
	KeyWiring = "trustyai-model-server-wiring"
)

// The images' RELATED_IMAGE_ variables, as OLM sets them (upstream's names).
const (
	EnvServiceImage = "RELATED_IMAGE_ODH_TRUSTYAI_SERVICE_PY_IMAGE"
	EnvProxyImage   = "RELATED_IMAGE_ODH_KUBE_RBAC_PROXY_IMAGE"
)

// Default images, as upstream's.
const (
	DefaultServiceImage = "quay.io/trustyai/trustyai-service:latest"
	DefaultProxyImage   = "quay.io/openshift/origin-kube-rbac-proxy:4.19"
)

// Settings are the operator-wide settings in force for TrustyAIServices.
type Settings struct {
	ServiceImage, ProxyImage string
	// IssuerKind and IssuerName of the cert-manager issuer; empty for the
	// chart's self-signed one.
	IssuerKind, IssuerName string
	// ProgressDeadlineSeconds of the Deployments (the kind-neutral key).
	ProgressDeadlineSeconds int32
	// Wiring points model servers at the service; Serverless includes
	// Serverless InferenceServices.
	Wiring, Serverless bool
}

// ParseSettings reads the settings from the environment (os.Environ form)
// and the settings ConfigMap's data (nil when it does not exist). Images:
// the ConfigMap's key, then the RELATED_IMAGE_ variable, then the default.
func ParseSettings(environ []string, data map[string]string) (Settings, error) {
	s := Settings{
		ServiceImage: settings.Image(data, KeyServiceImage, environ, EnvServiceImage, DefaultServiceImage),
		ProxyImage:   settings.Image(data, KeyProxyImage, environ, EnvProxyImage, DefaultProxyImage),
	}
	var err error
	if s.IssuerKind, s.IssuerName, err = settings.KindName(data, KeyCertManagerIssuer, "Issuer", "ClusterIssuer"); err != nil {
		return s, err
	}
	if s.ProgressDeadlineSeconds, err = settings.Seconds(data, settings.KeyProgressDeadlineSeconds); err != nil {
		return s, err
	}
	if s.Wiring, err = settings.Switch(data, KeyWiring, true); err != nil {
		return s, err
	}
	if s.Serverless, err = settings.Switch(data, KeyServerless, false); err != nil {
		return s, err
	}
	return s, nil
}
