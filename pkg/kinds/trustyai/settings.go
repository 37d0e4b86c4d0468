package trustyai

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// The keys of the operator's settings ConfigMap that concern
// TrustyAIServices: upstream's names, so that an existing operator
// ConfigMap's values carry over.
//
// The first three are also read from upstream's own ConfigMap,
// UpstreamConfigMap in the operator's namespace (upstream's
// controllers/images/resolver.go and controllers/tas/config_maps.go), so that
// one left behind by the trustyai-service-operator, or kept by a GitOps
// repository, still applies. Precedence, from strongest: our settings key
// (an administrator's explicit choice for this operator), the RELATED_IMAGE_
// variable, upstream's key (upstream's own order between the two), the
// default. The offline render reads neither ConfigMap.
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
	// points Serverless and Knative InferenceServices at the service too.
	KeyServerless = "kServeServerless"
	// KeyWiring ("enabled", the default, or "disabled") switches the
	// model-server wiring: the one place the operator writes objects it did
	// not create.
	KeyWiring = "trustyai-model-server-wiring"
	// KeyIngressDomain is the DNS domain under which TrustyAIServices are
	// exposed where there is no Route API: an Ingress for host
	// <name>.<namespace>.<domain>. Unset (the default), no Ingress is
	// rendered and the service is reachable inside the cluster only.
	KeyIngressDomain = "trustyai-ingress-domain"
	// KeyIngressClass is the Ingresses' ingressClassName; the cluster's
	// default IngressClass when unset.
	KeyIngressClass = "trustyai-ingress-class"
)

// MaxIngressDomainLength is the longest trustyai-ingress-domain: a host
// <name>.<namespace>.<domain> of the longest CR name (59) and namespace (63)
// stays within a DNS name's 253 characters.
const MaxIngressDomainLength = 253 - (59 + 1 + 63 + 1)

// UpstreamConfigMap is the trustyai-service-operator's ConfigMap of images
// and switches (upstream's constants.ConfigMap), read from the operator's
// namespace, never written.
const UpstreamConfigMap = "trustyai-service-operator-config"

// The images' RELATED_IMAGE_ variables, as OLM sets them (upstream's names).
const (
	EnvServiceImage = "RELATED_IMAGE_ODH_TRUSTYAI_SERVICE_PY_IMAGE"
	EnvProxyImage   = "RELATED_IMAGE_ODH_KUBE_RBAC_PROXY_IMAGE"
)

// Default images: those upstream ships in its ConfigMap (config/base and
// every overlay's params.env; upstream's code has no default of its own).
const (
	DefaultServiceImage = "quay.io/trustyai/trustyai-service:latest"
	DefaultProxyImage   = "quay.io/opendatahub/odh-kube-rbac-proxy:odh-stable"
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
		ProxyImage:   settings.Image(data, KeyProxyImage, environ, EnvProxyImage, upstreamImage(upstream, KeyProxyImage, DefaultProxyImage)),
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
	if s.IngressDomain, err = ingressDomain(data); err != nil {
		return s, err
	}
	if s.IngressClass, err = ingressClass(data); err != nil {
		return s, err
	}
	return s, nil
}

// ingressDomain reads trustyai-ingress-domain: a lowercase DNS name short
// enough that every service's host is one too; "" when unset.
func ingressDomain(data map[string]string) (string, error) {
	v := strings.TrimSpace(data[KeyIngressDomain])
	if v == "" {
		return "", nil
	}
	const want = "must be a lowercase DNS domain such as apps.example.com (services get hosts <name>.<namespace>.<domain>)"
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return "", settings.Invalid(KeyIngressDomain, "%s, got %q: %s", want, v, strings.Join(errs, "; "))
	}
	for _, label := range strings.Split(v, ".") {
		if len(label) > validation.DNS1123LabelMaxLength {
			return "", settings.Invalid(KeyIngressDomain, "%s, got %q: the label %q is over %d characters", want, v, label, validation.DNS1123LabelMaxLength)
		}
	}
	if len(v) > MaxIngressDomainLength {
		return "", settings.Invalid(KeyIngressDomain, "%s of at most %d characters, so that every host <name>.<namespace>.<domain> is within 253, got %d characters", want, MaxIngressDomainLength, len(v))
	}
	return v, nil
}

// ingressClass reads trustyai-ingress-class, the name of an IngressClass;
// "" when unset.
func ingressClass(data map[string]string) (string, error) {
	v := strings.TrimSpace(data[KeyIngressClass])
	if v == "" {
		return "", nil
	}
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return "", settings.Invalid(KeyIngressClass, "must name an IngressClass (a lowercase DNS subdomain such as nginx), got %q: %s", v, strings.Join(errs, "; "))
	}
	return v, nil
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

// IngressSettings reads trustyai-ingress-domain and trustyai-ingress-class,
// which the Ingresses of every TrustyAI kind follow (NemoGuardrails' too):
// "" for either when unset.
func IngressSettings(data map[string]string) (domain, class string, err error) {
	if domain, err = ingressDomain(data); err != nil {
		return "", "", err
	}
	class, err = ingressClass(data)
	return domain, class, err
}
