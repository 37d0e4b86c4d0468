package nemoguardrails

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Pod template annotations: the configurations' content hash (upstream's
// name) and the merged CA bundle's; the pods restart exactly when one
// changes.
const (
	AnnotationConfigHash   = "trustyai.opendatahub.io/nemo-config-hash"
	AnnotationCABundleHash = "configmap.hash/ca-bundle"
)

// valuesInputs are what the translation needs besides the CR.
type valuesInputs struct {
	Settings     Settings
	CommonLabels map[string]string
	Platform     platform.Cluster
	// ConfigHash is the content hash of the configurations' ConfigMaps.
	ConfigHash string
	// TrustConfigMap is the merged bundle to mount ("" for none), TrustHash
	// its content hash.
	TrustConfigMap, TrustHash string
}

// chartValues are the values of the nemo-guardrails chart
// (charts/nemo-guardrails/values.yaml documents each one). Strings are
// never omitted: an empty one must override the chart's default.
type chartValues struct {
	Name                    string            `json:"name"`
	CommonLabels            map[string]string `json:"commonLabels,omitempty"`
	Replicas                int32             `json:"replicas"`
	ProgressDeadlineSeconds int32             `json:"progressDeadlineSeconds,omitempty"`
	Image                   string            `json:"image"`
	ProxyImage              string            `json:"proxyImage"`
	Auth                    bool              `json:"auth"`
	Configs                 []configValues    `json:"configs"`
	DefaultConfig           string            `json:"defaultConfig"`
	Env                     []corev1.EnvVar   `json:"env"`
	Pod                     podValues         `json:"pod"`
	TLS                     tlsValues         `json:"tls"`
	Capabilities            capabilityValues  `json:"capabilities"`
	Ingress                 ingressValues     `json:"ingress"`
	Trust                   trustValues       `json:"trust"`
	PodAnnotations          map[string]string `json:"podAnnotations,omitempty"`
}

type configValues struct {
	Name       string   `json:"name"`
	ConfigMaps []string `json:"configMaps"`
}

type podValues struct {
	Affinity     *corev1.Affinity    `json:"affinity"`
	Tolerations  []corev1.Toleration `json:"tolerations"`
	NodeSelector map[string]string   `json:"nodeSelector"`
}

type tlsValues struct {
	Mode string `json:"mode"`
}

type capabilityValues struct {
	Route       bool `json:"route"`
	OpenShift   bool `json:"openshift"`
	CertManager bool `json:"certManager"`
}

type ingressValues struct {
	Host      string `json:"host"`
	ClassName string `json:"className"`
}

type trustValues struct {
	ConfigMapName string `json:"configMapName"`
}

// authRequired is upstream's rule: the annotation, "true" in any case.
func authRequired(cr *nemov1alpha1.NemoGuardrails) bool {
	return strings.EqualFold(cr.Annotations[nemov1alpha1.AuthAnnotation], "true")
}

// replicas is spec.replicas, 1 when unset (the CRD's default).
func replicas(cr *nemov1alpha1.NemoGuardrails) int32 {
	if cr.Spec.Replicas == nil {
		return 1
	}
	return *cr.Spec.Replicas
}

// defaultConfig is CONFIG_ID: the first configuration marked default, else
// the first one (upstream's rule); "" without any.
func defaultConfig(configs []nemov1alpha1.NemoConfig) string {
	for _, c := range configs {
		if c.Default {
			return c.Name
		}
	}
	if len(configs) > 0 {
		return configs[0].Name
	}
	return ""
}

// checkConfigs refuses what Kubernetes would refuse in the pod (two
// configurations in one directory) or what upstream refuses (a
// configuration without ConfigMaps).
func checkConfigs(configs []nemov1alpha1.NemoConfig) error {
	seen := map[string]int{}
	for i, c := range configs {
		field := fmt.Sprintf("spec.nemoConfigs[%d]", i)
		if len(c.ConfigMaps) == 0 {
			return status.Invalid(field+".configMaps", "configuration %q lists no ConfigMap; name the ConfigMaps of its files (config.yaml, rails.co, actions.py, ...)", c.Name)
		}
		if j, ok := seen[c.Name]; ok {
			return status.Invalid(field+".name", "%q is also spec.nemoConfigs[%d]'s name: each configuration needs a directory /app/config/<name> of its own; rename one", c.Name, j)
		}
		seen[c.Name] = i
		for k, cm := range c.ConfigMaps {
			if cm == "" {
				return status.Invalid(fmt.Sprintf("%s.configMaps[%d]", field, k), "is empty; name a ConfigMap of this namespace")
			}
		}
	}
	return nil
}

// translate maps a CR and its inputs to chart values: pure.
func translate(cr *nemov1alpha1.NemoGuardrails, in valuesInputs) (*chartValues, error) {
	spec := cr.Spec
	if errs := validation.IsDNS1035Label(cr.Name); len(errs) > 0 {
		// The API server takes a DNS subdomain for a custom resource; the
		// Service (and its port) upstream names after it takes less.
		return nil, status.Invalid("metadata.name", "%s cannot name the server's Service and its port, which are named after the NemoGuardrails (as upstream's are): %s; create it under a name of lowercase letters, digits and '-' that starts with a letter, at most 63 characters", status.Quote(cr.Name), strings.Join(errs, "; "))
	}
	if err := checkConfigs(spec.NemoConfigs); err != nil {
		return nil, err
	}
	if spec.Replicas != nil && *spec.Replicas < 0 {
		return nil, status.Invalid("spec.replicas", "must not be negative, got %d", *spec.Replicas)
	}
	v := &chartValues{
		Name:                    cr.Name,
		CommonLabels:            in.CommonLabels,
		Replicas:                replicas(cr),
		ProgressDeadlineSeconds: in.Settings.ProgressDeadlineSeconds,
		Image:                   in.Settings.Image,
		ProxyImage:              in.Settings.ProxyImage,
		Auth:                    authRequired(cr),
		Configs:                 []configValues{},
		DefaultConfig:           defaultConfig(spec.NemoConfigs),
		Env:                     spec.Env,
		TLS:                     tlsValues{Mode: in.Platform.TLSMode()},
		Capabilities:            capabilityValues{Route: in.Platform.Route, OpenShift: in.Platform.OpenShift, CertManager: in.Platform.CertManager},
		Trust:                   trustValues{ConfigMapName: in.TrustConfigMap},
	}
	if v.Env == nil {
		v.Env = []corev1.EnvVar{}
	}
	for _, c := range spec.NemoConfigs {
		v.Configs = append(v.Configs, configValues{Name: c.Name, ConfigMaps: c.ConfigMaps})
	}
	if t := spec.Template; t != nil && t.Pod != nil {
		v.Pod = podValues{Affinity: t.Pod.Affinity, Tolerations: t.Pod.Tolerations, NodeSelector: t.Pod.NodeSelector}
	}
	if !in.Platform.Route && in.Settings.IngressDomain != "" {
		v.Ingress = ingressValues{Host: ingressHost(cr.Name, cr.Namespace, in.Settings.IngressDomain), ClassName: in.Settings.IngressClass}
	}
	annotations := map[string]string{}
	if in.ConfigHash != "" {
		annotations[AnnotationConfigHash] = in.ConfigHash
	}
	if in.TrustConfigMap != "" {
		annotations[AnnotationCABundleHash] = in.TrustHash
	}
	if len(annotations) > 0 {
		v.PodAnnotations = annotations
	}
	return v, nil
}
