package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthAnnotation on a NemoGuardrails set to "true" (any case) puts
// kube-rbac-proxy in front of the server, as upstream does (Open Data Hub's
// annotation).
const AuthAnnotation = "security.opendatahub.io/enable-auth"

// Phases of status.phase (upstream's values).
const (
	PhaseReady    = "Ready"
	PhaseNotReady = "NotReady"
)

// NemoConfig is one configuration of the NeMo Guardrails server: the files of
// its ConfigMaps appear in /app/config/<name>.
type NemoConfig struct {
	// Name is the configuration's id in the server and its directory under
	// /app/config: letters, digits, '-' and '_'.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// ConfigMaps of the CR's namespace whose files make up the
	// configuration (config.yaml, rails.co, actions.py, ...), all mounted in
	// /app/config/<name>; a change to one restarts the pods.
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	ConfigMaps []string `json:"configMaps,omitempty"`
	// Default makes this the server's default configuration (CONFIG_ID);
	// the first one so marked wins, and without any the first entry is the
	// default.
	// +optional
	Default bool `json:"default,omitempty"`
}

// CABundleConfig names a ConfigMap of CA certificates the server trusts, in
// addition to the platform's.
type CABundleConfig struct {
	// ConfigMapName is the ConfigMap holding the certificates.
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName"`
	// ConfigMapNamespace is the ConfigMap's namespace, the CR's when empty.
	// Another namespace is read only where the operator's settings allow it
	// (cross-namespace-ca-bundles: enabled).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ConfigMapNamespace string `json:"configMapNamespace,omitempty"`
	// ConfigMapKeys are the keys whose certificates are concatenated;
	// ca-bundle.crt when empty.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9]([a-zA-Z0-9\-_.]*[a-zA-Z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	ConfigMapKeys []string `json:"configMapKeys,omitempty"`
}

// MCPGatewayConfig names the Gateway API Gateway that an
// MCPGatewayExtension targets.
type MCPGatewayConfig struct {
	// Name of the gateway; any MCPGatewayExtension's target when empty.
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the MCPGatewayExtension.
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// NemoGuardrailsSpec is the desired state of a NeMo Guardrails server.
type NemoGuardrailsSpec struct {
	// NemoConfigs are the server's configurations.
	NemoConfigs []NemoConfig `json:"nemoConfigs"`
	// CABundleConfig adds a ConfigMap's CA certificates to those the server
	// trusts.
	// +optional
	CABundleConfig *CABundleConfig `json:"caBundleConfig,omitempty"`
	// Replicas of the server.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Env is added to the server container's environment, after the
	// operator's variables.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Template holds pod-level overrides.
	// +optional
	Template *NemoGuardrailsTemplate `json:"template,omitempty"`
}

// NemoGuardrailsTemplate holds the overrides of the server's pod template.
type NemoGuardrailsTemplate struct {
	// Pod holds the pod's scheduling constraints.
	// +optional
	Pod *NemoGuardrailsPodTemplate `json:"pod,omitempty"`
}

// NemoGuardrailsPodTemplate holds pod-level overrides.
type NemoGuardrailsPodTemplate struct {
	// Affinity of the pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// NodeSelector of the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// MCPGateway names the MCP gateway whose responses the EnvoyFilter
	// mcp-sse-strip rewrites (docs/trustyai.md says where it is written).
	// +optional
	MCPGateway *MCPGatewayConfig `json:"mcpGateway,omitempty"`
}

// CAStatus says which CA sources were found (upstream's fields).
type CAStatus struct {
	ODHTrustedCAFound       bool   `json:"odhTrustedCAFound"`
	ODHTrustedCAError       string `json:"odhTrustedCAError,omitempty"`
	OpenshiftServingCAFound bool   `json:"openshiftServingCAFound"`
	OpenshiftServingCAError string `json:"openshiftServingCAError,omitempty"`
	UserCAFound             bool   `json:"userCAFound,omitempty"`
	UserCAError             string `json:"userCAError,omitempty"`
}

// MCPGatewayStatus says whether the MCP gateway was found.
type MCPGatewayStatus struct {
	MCPGatewayFound bool   `json:"mcpGatewayFound"`
	MCPGatewayError string `json:"mcpGatewayError,omitempty"`
}

// BBRPluginStatus says whether the gateway's body-based-routing filter was
// found.
type BBRPluginStatus struct {
	BBRPluginFound bool   `json:"bbrPluginFound"`
	BBRPluginError string `json:"bbrPluginError,omitempty"`
}

// NemoGuardrailStatus is the observed state (upstream's type name).
type NemoGuardrailStatus struct {
	// Phase is Ready or NotReady.
	// +optional
	Phase string `json:"phase,omitempty"`
	// ObservedGeneration is the generation the status describes (this
	// operator's addition).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: upstream's DeploymentReady, RouteReady and
	// ReconcileComplete, and Ready, TrustReady (this operator's).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// CA says which CA sources were found.
	// +optional
	CA *CAStatus `json:"ca,omitempty"`
	// MCP says whether the MCP gateway was found.
	// +optional
	MCP *MCPGatewayStatus `json:"mcpGateway,omitempty"`
	// BBRPlugin says whether the gateway's body-based-routing filter was found.
	// +optional
	BBRPlugin *BBRPluginStatus `json:"bbrPlugin,omitempty"`
}

// NemoGuardrails is a NeMo Guardrails server.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NemoGuardrails struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NemoGuardrailsSpec  `json:"spec,omitempty"`
	Status NemoGuardrailStatus `json:"status,omitempty"`
}

// NemoGuardrailsList is a list of NemoGuardrails.
//
// +kubebuilder:object:root=true
type NemoGuardrailsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NemoGuardrails `json:"items"`
}
