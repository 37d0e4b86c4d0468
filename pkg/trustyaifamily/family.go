// Package trustyaifamily is what the TrustyAI family of kinds shares
// (TrustyAIService, EvalHub and NemoGuardrails, which upstream's one
// trustyai-service-operator serves): upstream's ConfigMap of images and
// switches, the kube-rbac-proxy image and the ClusterRole its bindings
// name, and the Ingress settings. Each kind package imports this one, never
// another kind's.
package trustyaifamily

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// UpstreamConfigMap is the trustyai-service-operator's ConfigMap of images
// and switches (upstream's constants.ConfigMap), read from the operator's
// namespace, never written.
const UpstreamConfigMap = "trustyai-service-operator-config"

// Reader reads the ConfigMaps the family's settings come from (release.Deps
// does).
type Reader interface {
	SettingsData(ctx context.Context) (map[string]string, error)
	OperatorConfigMapData(ctx context.Context, name string) (map[string]string, error)
}

// SettingsData reads the operator's settings and upstream's ConfigMap
// (UpstreamConfigMap), each nil when it does not exist.
func SettingsData(ctx context.Context, r Reader) (data, upstream map[string]string, err error) {
	if data, err = r.SettingsData(ctx); err != nil {
		return nil, nil, fmt.Errorf("read operator settings: %w", err)
	}
	if upstream, err = r.OperatorConfigMapData(ctx, UpstreamConfigMap); err != nil {
		return nil, nil, fmt.Errorf("read upstream's ConfigMap %s: %w", UpstreamConfigMap, err)
	}
	return data, upstream, nil
}

// The kube-rbac-proxy image in front of every TrustyAI kind's server: the
// settings key (upstream's name, also read from UpstreamConfigMap), its
// RELATED_IMAGE_ variable as OLM sets it (upstream's name), and the default
// upstream ships in its ConfigMap (config/base and every overlay's
// params.env).
const (
	KeyProxyImage     = "kube-rbac-proxy"
	EnvProxyImage     = "RELATED_IMAGE_ODH_KUBE_RBAC_PROXY_IMAGE"
	DefaultProxyImage = "quay.io/opendatahub/odh-kube-rbac-proxy:odh-stable"
)

// ProxyImage is the kube-rbac-proxy image in force: the settings
// ConfigMap's key (data), then the RELATED_IMAGE_ variable (environ, in
// os.Environ form), then upstream's ConfigMap's key (upstream), then the
// default. data and upstream are nil when their ConfigMap does not exist.
func ProxyImage(environ []string, data, upstream map[string]string) string {
	return settings.Image(data, KeyProxyImage, environ, EnvProxyImage, settings.Image(upstream, KeyProxyImage, nil, "", DefaultProxyImage))
}

// ProxyClusterRole is the ClusterRole (config/rbac) that lets kube-rbac-proxy
// review tokens and access: cluster-scoped APIs, so only a ClusterRoleBinding
// grants them. The operator holds the same permissions, so it may bind it.
const ProxyClusterRole = "ai-stack-operator-trustyai-proxy"

// The Ingress settings every TrustyAI kind follows.
const (
	// KeyIngressDomain is the DNS domain under which the servers are
	// exposed where there is no Route API: an Ingress for host
	// <name>.<namespace>.<domain>. Unset (the default), no Ingress is
	// rendered and the server is reachable inside the cluster only.
	KeyIngressDomain = "trustyai-ingress-domain"
	// KeyIngressClass is the Ingresses' ingressClassName; the cluster's
	// default IngressClass when unset.
	KeyIngressClass = "trustyai-ingress-class"
)

// MaxIngressDomainLength is the longest trustyai-ingress-domain: a host
// <name>.<namespace>.<domain> of the longest CR name (59) and namespace (63)
// stays within a DNS name's 253 characters.
const MaxIngressDomainLength = 253 - (59 + 1 + 63 + 1)

// IngressSettings reads trustyai-ingress-domain and trustyai-ingress-class:
// "" for either when unset.
func IngressSettings(data map[string]string) (domain, class string, err error) {
	if domain, err = ingressDomain(data); err != nil {
		return "", "", err
	}
	class, err = ingressClass(data)
	return domain, class, err
}

// ingressDomain reads trustyai-ingress-domain: a lowercase DNS name short
// enough that every server's host is one too; "" when unset.
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
