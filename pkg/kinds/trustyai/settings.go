package trustyai

import (
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// The keys of the operator's settings ConfigMap that concern
// TrustyAIServices: upstream's names, so that an existing operator
// ConfigMap's values carry over.
//
// KeyServiceImage and KeyServerless, and kube-rbac-proxy's image
// (trustyaifamily.KeyProxyImage), are also read from upstream's own
// ConfigMap, trustyaifamily.UpstreamConfigMap in the operator's namespace (upstream's
// controllers/images/resolver.go and controllers/tas/config_maps.go), so that
// one left behind by the trustyai-service-operator, or kept by a GitOps
// repository, still applies. Precedence, from strongest: our settings key
// (an administrator's explicit choice for this operator), the RELATED_IMAGE_
// variable, upstream's key (upstream's own order between the two), the
// default. The offline render reads neither ConfigMap.
const (
	// KeyServiceImage is the TrustyAI service's image.
	KeyServiceImage = "trustyaiServiceImage"
	// KeyCertManagerIssuer names the cert-manager issuer of the serving
	// certificates as Kind/name (Issuer/ca or ClusterIssuer/ca); a
	// self-signed Issuer per service when unset.
	KeyCertManagerIssuer = "trustyai-cert-manager-issuer"
	// KeyServerless ("enabled" or "disabled", the default; upstream's key)
	// points Serverless and Knative InferenceServices at the service too.
	KeyServerless = "kServeServerless"
	// KeyWiring ("enabled", the default, or "disabled") switches the
	// model-server wiring: the one place the operator writes objects it did
	// not create.
	KeyWiring = "trustyai-model-server-wiring"
)

// The service image's RELATED_IMAGE_ variable, as OLM sets it (upstream's
// name); kube-rbac-proxy's is the family's (trustyaifamily.EnvProxyImage).
const EnvServiceImage = "RELATED_IMAGE_ODH_TRUSTYAI_SERVICE_PY_IMAGE"

// DefaultServiceImage is the one upstream ships in its ConfigMap (config/base
// and every overlay's params.env; upstream's code has no default of its
// own); kube-rbac-proxy's is the family's (trustyaifamily.DefaultProxyImage).
const DefaultServiceImage = "quay.io/trustyai/trustyai-service:latest"

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
	// IngressDomain exposes the services through Ingresses where there is
	// no Route API ("" for none); IngressClass is their ingressClassName.
	IngressDomain, IngressClass string
}

// ParseSettings reads the settings from the environment (os.Environ form),
// the settings ConfigMap's data and upstream's ConfigMap's data (each nil
// when it does not exist). Images: our ConfigMap's key, then the
// RELATED_IMAGE_ variable, then upstream's key, then the default.
// kServeServerless: our key when set, else upstream's ("enabled" alone
// enables, anything else disables, as upstream reads it), else disabled.
func ParseSettings(environ []string, data, upstream map[string]string) (Settings, error) {
	s := Settings{
		ServiceImage: settings.Image(data, KeyServiceImage, environ, EnvServiceImage, upstreamImage(upstream, KeyServiceImage, DefaultServiceImage)),
		ProxyImage:   trustyaifamily.ProxyImage(environ, data, upstream),
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
	if s.Serverless, err = settings.Switch(data, KeyServerless, upstreamServerless(upstream)); err != nil {
		return s, err
	}
	s.IngressDomain, s.IngressClass, err = trustyaifamily.IngressSettings(data)
	return s, err
}

// upstreamImage is upstream's ConfigMap's image of the key, def when it has
// none.
func upstreamImage(upstream map[string]string, key, def string) string {
	return settings.Image(upstream, key, nil, "", def)
}

// upstreamServerless reads kServeServerless as upstream does: exactly
// "enabled" enables; anything else, or no ConfigMap, disables. Never an
// error: the ConfigMap is upstream's, and upstream accepts any value.
func upstreamServerless(upstream map[string]string) bool {
	return upstream[KeyServerless] == "enabled"
}
