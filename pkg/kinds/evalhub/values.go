package evalhub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Pod template annotations: the content hash of what the server reads
// (config.yaml, the provider and collection copies) and of the merged CA
// bundle; the pods restart exactly when one changes (upstream's do not).
const (
	AnnotationConfigHash   = "trustyai.opendatahub.io/evalhub-config-hash"
	AnnotationCABundleHash = "configmap.hash/ca-bundle"
)

// Definition is a provider's or collection's definition found in the
// operator's namespace: its name and its ConfigMap's data.
type Definition struct {
	Name string
	Data map[string]string
}

// valuesInputs are what the translation needs besides the CR.
type valuesInputs struct {
	Settings     Settings
	CommonLabels map[string]string
	Platform     platform.Cluster
	// Providers and Collections are the definitions found, in spec order
	// (those not found are left out: Status says which).
	Providers, Collections []Definition
	// TenantProviders and TenantCollections are the namespace's own
	// definitions' ConfigMaps, by name.
	TenantProviders, TenantCollections []string
	// TrustConfigMap is the merged bundle to mount ("" for none), TrustHash
	// its content hash.
	TrustConfigMap, TrustHash string
}

// chartValues are the values of the eval-hub chart
// (charts/eval-hub/values.yaml documents each one).
type chartValues struct {
	Name              string            `json:"name"`
	CommonLabels      map[string]string `json:"commonLabels,omitempty"`
	Replicas          int32             `json:"replicas"`
	Image             string            `json:"image"`
	ProxyImage        string            `json:"proxyImage"`
	Resources         Resources         `json:"resources"`
	ProxyResources    Resources         `json:"proxyResources"`
	Config            string            `json:"config"`
	Env               []corev1.EnvVar   `json:"env"`
	Providers         []copyValues      `json:"providers"`
	Collections       []copyValues      `json:"collections"`
	TenantProviders   []string          `json:"tenantProviders"`
	TenantCollections []string          `json:"tenantCollections"`
	Database          databaseValues    `json:"database"`
	Trust             trustValues       `json:"trust"`
	PodAnnotations    map[string]string `json:"podAnnotations,omitempty"`
	MCP               mcpValues         `json:"mcp"`
	TLS               tlsValues         `json:"tls"`
	Capabilities      capabilityValues  `json:"capabilities"`
}

type copyValues struct {
	Name string            `json:"name"`
	Data map[string]string `json:"data"`
}

type databaseValues struct {
	Secret string `json:"secret"`
}

type trustValues struct {
	ConfigMapName string `json:"configMapName"`
}

type mcpValues struct {
	Enabled   bool                         `json:"enabled"`
	Replicas  int32                        `json:"replicas"`
	Image     string                       `json:"image"`
	Transport string                       `json:"transport"`
	Env       []corev1.EnvVar              `json:"env"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

type tlsValues struct {
	Mode string `json:"mode"`
}

type capabilityValues struct {
	Route          bool `json:"route"`
	OpenShift      bool `json:"openshift"`
	CertManager    bool `json:"certManager"`
	ServiceMonitor bool `json:"serviceMonitor"`
}

// replicas is spec.replicas, 1 when unset (the CRD's default).
func replicas(spec evalhubv1.EvalHubSpec) int32 {
	if spec.Replicas == nil {
		return 1
	}
	return *spec.Replicas
}

// mcpEnabled is upstream's rule: spec.mcp.enabled true.
func mcpEnabled(spec evalhubv1.EvalHubSpec) bool {
	return spec.MCP != nil && spec.MCP.Enabled != nil && *spec.MCP.Enabled
}

// mergeEnv is the container's environment: the CR's variables first, in
// its order, then the defaults it does not set. A protected variable keeps
// its place but takes the operator's value; a protected one without a
// default (the server's TLS files: kube-rbac-proxy terminates TLS) is left
// out, where upstream writes a variable without a name that the API server
// refuses. A name the CR sets twice appears once, with its last value.
func mergeEnv(defaults, user []corev1.EnvVar, protected ...string) []corev1.EnvVar {
	def := map[string]corev1.EnvVar{}
	for _, e := range defaults {
		def[e.Name] = e
	}
	isProtected := map[string]bool{}
	for _, p := range protected {
		isProtected[p] = true
	}
	out := []corev1.EnvVar{}
	at := map[string]int{}
	for _, e := range user {
		if isProtected[e.Name] {
			d, ok := def[e.Name]
			if !ok {
				continue
			}
			e = d
		}
		if i, ok := at[e.Name]; ok {
			out[i] = e
			continue
		}
		at[e.Name] = len(out)
		out = append(out, e)
	}
	for _, e := range defaults {
		if _, ok := at[e.Name]; !ok {
			out = append(out, e)
		}
	}
	return out
}

func env(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

// serverEnv is eval-hub's environment: upstream's defaults merged with
// spec.env. MLFLOW_CA_CERT_PATH is set when a CA bundle is mounted.
func serverEnv(cr *evalhubv1.EvalHub, in valuesInputs) []corev1.EnvVar {
	defaults := []corev1.EnvVar{
		env("API_HOST", "127.0.0.1"),
		env("PORT", strconv.Itoa(serverPort)),
		env("LOG_LEVEL", "INFO"),
		env("MAX_CONCURRENT_EVALUATIONS", "10"),
		env("DEFAULT_TIMEOUT_MINUTES", "60"),
		env("MAX_RETRY_ATTEMPTS", "3"),
		env("EVAL_HUB_CONFIG_DIR", configDir),
		env("SERVICE_URL", serviceURL(cr.Name, cr.Namespace)),
		env("EVALHUB_INSTANCE_NAME", cr.Name),
		env("EVALHUB_HARDWARE_PROFILES_NAMESPACE", in.Settings.HardwareProfilesNamespace),
	}
	if in.TrustConfigMap != "" {
		defaults = append(defaults, env("MLFLOW_CA_CERT_PATH", mlflowCAPath))
	}
	defaults = append(defaults,
		env("MLFLOW_WORKSPACE", cr.Namespace),
		env("MLFLOW_TOKEN_PATH", "/var/run/secrets/mlflow/token"),
		env("METRICS_PORT", "8081"),
		env("METRICS_HOST", "0.0.0.0"),
	)
	return mergeEnv(defaults, cr.Spec.Env, "API_HOST", "PORT", "TLS_CERT_FILE", "TLS_KEY_FILE", "METRICS_PORT", "METRICS_HOST", "EVALHUB_HARDWARE_PROFILES_NAMESPACE")
}

// mcpTransports are the MCP server's --transport and EVALHUB_TRANSPORT.
func mcpTransports(m *evalhubv1.EvalHubMCPSpec) (client, server string) {
	client = m.Transport
	if client == "" {
		client = "http"
	}
	server = client
	if m.EvalHubTransport != "" {
		server = m.EvalHubTransport
	}
	return client, server
}

// mcp is the MCP server's values (upstream's environment, resources and
// image rules).
func mcp(cr *evalhubv1.EvalHub, in valuesInputs) mcpValues {
	if !mcpEnabled(cr.Spec) {
		return mcpValues{Enabled: false, Replicas: 1, Image: in.Settings.Image, Transport: "http", Env: []corev1.EnvVar{}}
	}
	m := cr.Spec.MCP
	client, server := mcpTransports(m)
	v := mcpValues{Enabled: true, Replicas: 1, Image: in.Settings.Image, Transport: client}
	if m.Replicas != nil {
		v.Replicas = *m.Replicas
	}
	if m.Image != "" {
		v.Image = m.Image
	}
	if m.Resources.Requests != nil || m.Resources.Limits != nil {
		v.Resources = m.Resources.DeepCopy()
	}
	defaults := []corev1.EnvVar{
		env("EVALHUB_TRANSPORT", server),
		env("EVALHUB_HOST", "127.0.0.1"),
		env("EVALHUB_PORT", "8445"),
		env("EVALHUB_BASE_URL", serviceURL(cr.Name, cr.Namespace)),
		env("EVALHUB_TENANT", cr.Namespace),
		env("EVALHUB_CA_CERT_PATH", "/etc/evalhub-mcp/ca/service-ca.crt"),
		env("EVALHUB_INSECURE", "false"),
	}
	if m.AuthSecret != "" {
		defaults = append(defaults, corev1.EnvVar{Name: "EVALHUB_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: m.AuthSecret}, Key: "token"}}})
	}
	v.Env = mergeEnv(defaults, m.Env, "EVALHUB_HOST", "EVALHUB_PORT", "EVALHUB_TLS_CERT_FILE", "EVALHUB_TLS_KEY_FILE")
	return v
}

// checkNames refuses list entries that cannot name a ConfigMap
// (<name>-provider-<entry>) or that repeat.
func checkNames(field string, names []string) error {
	seen := map[string]int{}
	for i, n := range names {
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := status.CheckName(f, n, validLabelValue, "a provider or collection name"); err != nil {
			return err
		}
		if j, ok := seen[n]; ok {
			return status.Invalid(f, "%s is also %s[%d]: list each once", status.Quote(n), field, j)
		}
		seen[n] = i
	}
	return nil
}

// translate maps a CR and its inputs to chart values: pure.
func translate(cr *evalhubv1.EvalHub, in valuesInputs) (*chartValues, error) {
	spec := cr.Spec
	if spec.Replicas != nil && *spec.Replicas < 1 {
		return nil, status.Invalid("spec.replicas", "must be at least 1, got %d", *spec.Replicas)
	}
	if err := checkNames("spec.providers", spec.Providers); err != nil {
		return nil, err
	}
	if err := checkNames("spec.collections", spec.Collections); err != nil {
		return nil, err
	}
	config, err := serverConfig(spec, in.Settings.Image)
	if err != nil {
		return nil, err
	}
	v := &chartValues{
		Name:              cr.Name,
		CommonLabels:      in.CommonLabels,
		Replicas:          replicas(spec),
		Image:             in.Settings.Image,
		ProxyImage:        in.Settings.ProxyImage,
		Resources:         in.Settings.Server,
		ProxyResources:    in.Settings.Proxy,
		Config:            config,
		Env:               serverEnv(cr, in),
		Providers:         copies(in.Providers),
		Collections:       copies(in.Collections),
		TenantProviders:   nonNil(in.TenantProviders),
		TenantCollections: nonNil(in.TenantCollections),
		Trust:             trustValues{ConfigMapName: in.TrustConfigMap},
		MCP:               mcp(cr, in),
		TLS:               tlsValues{Mode: in.Platform.TLSMode()},
		Capabilities:      capabilityValues{Route: in.Platform.Route, OpenShift: in.Platform.OpenShift, CertManager: in.Platform.CertManager, ServiceMonitor: in.Platform.ServiceMonitor},
	}
	if spec.Database.Type == evalhubv1.DatabasePostgreSQL {
		v.Database.Secret = spec.Database.Secret
	}
	v.PodAnnotations = map[string]string{AnnotationConfigHash: configHash(v)}
	if in.TrustConfigMap != "" {
		v.PodAnnotations[AnnotationCABundleHash] = in.TrustHash
	}
	return v, nil
}

// configHash hashes what the server reads from the chart's ConfigMaps.
func configHash(v *chartValues) string {
	h := sha256.New()
	fmt.Fprintf(h, "config\x00%s\x00", v.Config)
	for _, group := range [][]copyValues{v.Providers, v.Collections} {
		for _, c := range group {
			keys := make([]string, 0, len(c.Data))
			for k := range c.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(h, "copy\x00%s\x00", c.Name)
			for _, k := range keys {
				fmt.Fprintf(h, "%s\x00%s\x00", k, c.Data[k])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func copies(defs []Definition) []copyValues {
	out := []copyValues{}
	for _, d := range defs {
		data := d.Data
		if data == nil {
			data = map[string]string{}
		}
		out = append(out, copyValues{Name: d.Name, Data: data})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// validLabelValue: a provider's or collection's name is a label value
// (upstream finds definitions by it) and part of a ConfigMap's name.
func validLabelValue(s string) []string { return validation.IsDNS1123Label(s) }
