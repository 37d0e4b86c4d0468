package evalhub

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// The keys and variables of eval-hub's image: upstream's
// (controllers/evalhub/constants.go), so that an existing operator ConfigMap
// or OLM's RELATED_IMAGE_ carries over. kube-rbac-proxy's image is
// TrustyAIService's (trustyaifamily.KeyProxyImage).
const (
	KeyImage     = "evalHubImage"
	EnvImage     = "RELATED_IMAGE_ODH_EVAL_HUB_IMAGE"
	DefaultImage = "quay.io/evalhub/evalhub:latest"
	// KeyHardwareProfilesNamespace is where eval-hub reads hardware profiles
	// (EVALHUB_HARDWARE_PROFILES_NAMESPACE); the operator's namespace, as
	// upstream's applications namespace, when unset.
	KeyHardwareProfilesNamespace = "evalhub-hardware-profiles-namespace"
	// KeyHubNamespaces lists (comma-separated) the namespaces whose
	// multi-tenant EvalHubs serve tenant namespaces; none when unset: an
	// EvalHub reaches no namespace but its own until an administrator names
	// its namespace here (docs/security.md).
	KeyHubNamespaces = "evalhub-hub-namespaces"
	// KeyTenantNamespaces lists (comma-separated) tenant namespaces besides
	// those labelled evalhub.trustyai.opendatahub.io/tenant.
	KeyTenantNamespaces = "evalhub-tenant-namespaces"
	// KeyTenantSecrets (enabled, the default, or disabled) says whether a
	// hub's server may read and write Secrets in its tenants (upstream's
	// model-secret role: get, list, create, update, delete, which eval-hub
	// uses to copy a job's model credentials and clean them up).
	// Disabled, the hub holds no Secret access outside its own namespace:
	// jobs that authenticate to their model or export to OCI through a
	// Secret of the tenant then fail (docs/security.md).
	KeyTenantSecrets = "evalhub-tenant-secrets"
)

// Resource keys of the containers (upstream's), each a quantity.
var resourceKeys = []struct{ key, container, kind, name, def string }{
	{"evalHubCPURequest", "evalhub", "requests", "cpu", "500m"},
	{"evalHubMemoryRequest", "evalhub", "requests", "memory", "512Mi"},
	{"evalHubCPULimit", "evalhub", "limits", "cpu", "2000m"},
	{"evalHubMemoryLimit", "evalhub", "limits", "memory", "2Gi"},
	{"kubeRBACProxyCPURequest", "proxy", "requests", "cpu", "100m"},
	{"kubeRBACProxyMemoryRequest", "proxy", "requests", "memory", "128Mi"},
	{"kubeRBACProxyCPULimit", "proxy", "limits", "cpu", "500m"},
	{"kubeRBACProxyMemoryLimit", "proxy", "limits", "memory", "512Mi"},
}

// Resources are a container's requests and limits, by resource name.
type Resources struct {
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

// Settings are the operator-wide settings in force for EvalHub.
type Settings struct {
	Image, ProxyImage string
	// Server and Proxy are the containers' resources.
	Server, Proxy Resources
	// HardwareProfilesNamespace is EVALHUB_HARDWARE_PROFILES_NAMESPACE.
	HardwareProfilesNamespace string
	// HubNamespaces and TenantNamespaces are the tenancy grants.
	HubNamespaces, TenantNamespaces []string
	// TenantSecrets: the model-secret role is bound in tenants.
	TenantSecrets bool
}

// ParseSettings reads the settings from the environment (os.Environ form),
// the settings ConfigMap's data and upstream's ConfigMap's data (each nil
// when it does not exist); operatorNamespace is the default hardware
// profiles' namespace. Images: our key, the RELATED_IMAGE_ variable,
// upstream's key, the default. Resources: our key, upstream's, the default;
// a quantity that does not parse is refused with its key (upstream ignores
// it silently).
func ParseSettings(environ []string, data, upstream map[string]string, operatorNamespace string) (Settings, error) {
	s := Settings{
		Image:                     settings.Image(data, KeyImage, environ, EnvImage, settings.Image(upstream, KeyImage, nil, "", DefaultImage)),
		ProxyImage:                trustyaifamily.ProxyImage(environ, data, upstream),
		Server:                    Resources{Requests: map[string]string{}, Limits: map[string]string{}},
		Proxy:                     Resources{Requests: map[string]string{}, Limits: map[string]string{}},
		HardwareProfilesNamespace: operatorNamespace,
	}
	if v := strings.TrimSpace(data[KeyHardwareProfilesNamespace]); v != "" {
		s.HardwareProfilesNamespace = v
	}
	var err error
	if s.HubNamespaces, err = namespaceList(data, KeyHubNamespaces); err != nil {
		return s, err
	}
	if s.TenantNamespaces, err = namespaceList(data, KeyTenantNamespaces); err != nil {
		return s, err
	}
	if s.TenantSecrets, err = settings.Switch(data, KeyTenantSecrets, true); err != nil {
		return s, err
	}
	for _, k := range resourceKeys {
		v, from := strings.TrimSpace(data[k.key]), "the operator's settings"
		if v == "" {
			v, from = strings.TrimSpace(upstream[k.key]), "ConfigMap "+trustyaifamily.UpstreamConfigMap
		}
		if v == "" {
			v = k.def
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return s, settings.Invalid(k.key, "%q in %s is not a quantity (e.g. 500m, 2Gi): %v", v, from, err)
		}
		// The API server stores a quantity in its canonical form ("2000m"
		// as "2"): rendered so, the Deployment is what is stored, and no
		// reconcile sees drift in it.
		v = q.String()
		r := &s.Server
		if k.container == "proxy" {
			r = &s.Proxy
		}
		if k.kind == "requests" {
			r.Requests[k.name] = v
		} else {
			r.Limits[k.name] = v
		}
	}
	return s, nil
}

// namespaceList reads a comma-separated list of namespace names; each must
// be one.
func namespaceList(data map[string]string, key string) ([]string, error) {
	var out []string
	for _, ns := range strings.Split(data[key], ",") {
		ns = strings.TrimSpace(ns)
		if ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, settings.Invalid(key, "%q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
		out = append(out, ns)
	}
	return out, nil
}

// settings reads the operator's settings and upstream's ConfigMap.
func (k *Kind) settings(ctx context.Context) (Settings, error) {
	data, upstream, err := trustyaifamily.SettingsData(ctx, k.Deps)
	if err != nil {
		return Settings{}, err
	}
	return ParseSettings(k.Env(), data, upstream, k.OperatorNamespace)
}
