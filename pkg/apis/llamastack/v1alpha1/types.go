package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults shared by the API, the translation layer and the chart.
const (
	// Kind is the kind name of this API.
	Kind = "LlamaStackDistribution"
	// DefaultContainerName is the server container's name when containerSpec.name is unset.
	DefaultContainerName = "llama-stack"
	// DefaultServerPort is the server port when containerSpec.port is unset.
	DefaultServerPort int32 = 8321
	// DefaultMountPath is where storage is mounted when storage.mountPath is unset.
	DefaultMountPath = "/.llama"
	// DefaultStorageSize is the PVC size when storage.size is unset.
	DefaultStorageSize = "10Gi"
)

// LlamaStackDistributionSpec is the desired state of a Llama Stack server.
type LlamaStackDistributionSpec struct {
	// Replicas is the number of server pods.
	// +kubebuilder:default:=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Server configures the Llama Stack server.
	Server ServerSpec `json:"server"`

	// Network configures exposure and the NetworkPolicy.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`
}

// NetworkSpec configures who may reach the server.
type NetworkSpec struct {
	// ExposeRoute exposes the server outside the cluster: an OpenShift Route
	// (edge TLS) where the Route API exists, an Ingress elsewhere.
	// +optional
	// +kubebuilder:default=false
	ExposeRoute bool `json:"exposeRoute,omitempty"`

	// AllowedFrom adds namespaces to the NetworkPolicy's allowed sources
	// (pods of the CR's own namespace and the operator's are always allowed).
	// +optional
	AllowedFrom *AllowedFromSpec `json:"allowedFrom,omitempty"`
}

// AllowedFromSpec lists extra namespaces allowed to reach the server.
type AllowedFromSpec struct {
	// Namespaces are namespace names; "*" allows every namespace.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// Labels are namespace label keys (namespaces that carry any of them are
	// allowed) or key=value pairs (namespaces with that label value); an entry
	// that can match no namespace is left out and reported (AllowedFromValid).
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ServerSpec configures the Llama Stack server.
// +kubebuilder:validation:XValidation:rule="!(has(self.userConfig) && has(self.config))",message="set at most one of spec.server.userConfig (a ConfigMap you manage) and spec.server.config (a typed run configuration)"
type ServerSpec struct {
	// Distribution selects the server image, by distribution name or directly.
	Distribution DistributionType `json:"distribution"`

	// ContainerSpec configures the server container.
	// +optional
	ContainerSpec ContainerSpec `json:"containerSpec,omitempty"`

	// Storage, when set, gives the server a PersistentVolumeClaim.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// UserConfig names a ConfigMap with the server's run configuration (key config.yaml).
	// +optional
	UserConfig *UserConfigSpec `json:"userConfig,omitempty"`

	// Config is a typed run configuration, rendered into the ConfigMap
	// <name>-config; mutually exclusive with userConfig.
	// +optional
	Config *ServerConfig `json:"config,omitempty"`

	// Workers is the number of uvicorn worker processes (LLAMA_STACK_WORKERS).
	// Unless containerSpec.resources says otherwise, the container requests a
	// CPU per worker (one when unset) and 1Gi of memory, and with workers set
	// its limits equal its requests.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Workers *int32 `json:"workers,omitempty"`

	// PodOverrides customise the pod.
	// +optional
	PodOverrides *PodOverrides `json:"podOverrides,omitempty"`

	// PodDisruptionBudget for the server pods; when unset and more than one
	// replica runs, maxUnavailable is 1.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// TopologySpreadConstraints for the server pods; when unset and more than
	// one replica runs, pods spread over nodes and zones (ScheduleAnyway).
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Autoscaling, when set, adds a HorizontalPodAutoscaler that owns the replica count.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// TLSConfig configures the certificates the server trusts.
	// +optional
	TLSConfig *TLSConfig `json:"tlsConfig,omitempty"`
}

// PodOverrides customise the server pod.
type PodOverrides struct {
	// ServiceAccountName runs the pods as an existing ServiceAccount; the
	// operator then creates none.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// TerminationGracePeriodSeconds of the pods.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// Volumes added to the pod.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// VolumeMounts added to the server container.
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// PodDisruptionBudgetSpec sets at most one of minAvailable and maxUnavailable.
// +kubebuilder:validation:XValidation:rule="!(has(self.minAvailable) && has(self.maxUnavailable))",message="set at most one of spec.server.podDisruptionBudget.minAvailable and maxUnavailable"
type PodDisruptionBudgetSpec struct {
	// MinAvailable pods (a number or a percentage).
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable pods (a number or a percentage).
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// AutoscalingSpec configures a HorizontalPodAutoscaler.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="spec.server.autoscaling.minReplicas must not exceed maxReplicas"
type AutoscalingSpec struct {
	// MinReplicas; the HPA's minimum is the largest of 1, spec.replicas and
	// this.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilizationPercentage of the CPU request; 80 when neither target is set.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// TargetMemoryUtilizationPercentage of the memory request.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// TLSConfig configures the certificates the server trusts. The operator
// merges every source into the ConfigMap <name>-ca-bundle (key
// ca-bundle.crt), mounted with SSL_CERT_FILE and REQUESTS_CA_BUNDLE pointing
// at it: caBundle, Open Data Hub's odh-trusted-ca-bundle when the namespace
// has one, on OpenShift the service CA and the cluster's trusted CAs, and the
// public roots (so that SSL_CERT_FILE does not cut the server off from public
// endpoints).
type TLSConfig struct {
	// CABundle names a ConfigMap of CA certificates to trust.
	// +optional
	CABundle *CABundleConfig `json:"caBundle,omitempty"`

	// ServiceCA adds the OpenShift service CA (which signs in-cluster
	// serving certificates); OpenShift only. Default true.
	// +optional
	ServiceCA *bool `json:"serviceCA,omitempty"`

	// ClusterTrustedCA adds the OpenShift cluster's trusted CAs (proxy CAs
	// and system roots); OpenShift only. Default true.
	// +optional
	ClusterTrustedCA *bool `json:"clusterTrustedCA,omitempty"`

	// PublicRoots adds the public root CAs (Mozilla's, as shipped with the
	// operator). Default true.
	// +optional
	PublicRoots *bool `json:"publicRoots,omitempty"`
}

// CABundleConfig names a ConfigMap of PEM CA certificates.
type CABundleConfig struct {
	// ConfigMapName of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ConfigMapName string `json:"configMapName"`

	// ConfigMapNamespace of the ConfigMap; the CR's namespace when unset.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ConfigMapNamespace string `json:"configMapNamespace,omitempty"`

	// ConfigMapKeys holding certificates; ["ca-bundle.crt"] when unset.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9]([a-zA-Z0-9\-_.]*[a-zA-Z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	ConfigMapKeys []string `json:"configMapKeys,omitempty"`
}

// DistributionType selects the server image: exactly one of name or image.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.image)",message="set exactly one of spec.server.distribution.name (a distribution name such as starter) or spec.server.distribution.image (a container image)"
type DistributionType struct {
	// Name is a distribution name that maps to a known image (for example starter).
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name string `json:"name,omitempty"`

	// Image is a container image reference used as is.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Image string `json:"image,omitempty"`
}

// ContainerSpec configures the server container.
type ContainerSpec struct {
	// Name of the container (a DNS-1123 label, as Kubernetes requires).
	// +kubebuilder:default:="llama-stack"
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Name string `json:"name,omitempty"`

	// Port the server listens on; 8321 when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Resources of the server container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Env adds environment variables to the server container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// EnvFrom adds environment variables from ConfigMaps and Secrets.
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// Command overrides the image's entrypoint.
	// +optional
	Command []string `json:"command,omitempty"`

	// Args overrides the image's arguments.
	// +optional
	Args []string `json:"args,omitempty"`
}

// StorageSpec gives the server a PersistentVolumeClaim.
type StorageSpec struct {
	// Size of the PersistentVolumeClaim; 10Gi when unset.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// MountPath is where the volume is mounted in the container; /.llama when unset.
	// +optional
	MountPath string `json:"mountPath,omitempty"`
}

// UserConfigSpec names the ConfigMap holding the server's run configuration.
type UserConfigSpec struct {
	// ConfigMapName is the name of the ConfigMap (key config.yaml).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ConfigMapName string `json:"configMapName"`

	// ConfigMapNamespace is the ConfigMap's namespace; the CR's namespace when unset.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ConfigMapNamespace string `json:"configMapNamespace,omitempty"`
}

// DistributionPhase is the coarse state of a distribution.
// +kubebuilder:validation:Enum=Pending;Initializing;Ready;Failed;Terminating
type DistributionPhase string

// Phases, as upstream.
const (
	PhasePending      DistributionPhase = "Pending"
	PhaseInitializing DistributionPhase = "Initializing"
	PhaseReady        DistributionPhase = "Ready"
	PhaseFailed       DistributionPhase = "Failed"
	PhaseTerminating  DistributionPhase = "Terminating"
)

// VersionInfo reports the versions behind a distribution.
type VersionInfo struct {
	// OperatorVersion is the version of the operator that last reconciled the distribution.
	// +optional
	OperatorVersion string `json:"operatorVersion,omitempty"`

	// LlamaStackServerVersion is the version of the server, when known.
	// +optional
	LlamaStackServerVersion string `json:"llamaStackServerVersion,omitempty"`

	// LastUpdated is when the version information last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
}

// DistributionConfig reports which distribution runs.
type DistributionConfig struct {
	// ActiveDistribution is the distribution name, or "custom" for an image
	// given directly.
	// +optional
	ActiveDistribution string `json:"activeDistribution,omitempty"`

	// AvailableDistributions maps the known distribution names to their images.
	// +optional
	AvailableDistributions map[string]string `json:"availableDistributions,omitempty"`

	// Providers are the server's providers and their health, as its
	// /v1/providers endpoint lists them (read while its pods are ready, at
	// most once a minute).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Providers []ProviderInfo `json:"providers,omitempty"`
}

// ProviderInfo is one provider the server runs.
type ProviderInfo struct {
	// API is the API the provider serves (inference, safety, ...).
	API string `json:"api"`
	// ProviderID names the provider in the server's configuration.
	ProviderID string `json:"provider_id"`
	// ProviderType is the provider's implementation (remote::vllm, ...).
	ProviderType string `json:"provider_type"`
	// Config is the provider's configuration as the server reports it
	// (secrets are redacted by the server); omitted over 4 KiB.
	// +kubebuilder:pruning:PreserveUnknownFields
	Config apiextensionsv1.JSON `json:"config"`
	// Health is what the provider says of its health.
	Health ProviderHealthStatus `json:"health"`
}

// ProviderHealthStatus is a provider's health.
type ProviderHealthStatus struct {
	// Status is OK, Error or Not Implemented.
	Status string `json:"status"`
	// Message says why, when not OK.
	Message string `json:"message"`
}

// LlamaStackDistributionStatus is the observed state of a distribution.
type LlamaStackDistributionStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the coarse state of the distribution.
	// +optional
	Phase DistributionPhase `json:"phase,omitempty"`

	// Version reports the versions behind the distribution.
	// +optional
	Version VersionInfo `json:"version,omitempty"`

	// DistributionConfig reports which distribution runs.
	// +optional
	DistributionConfig DistributionConfig `json:"distributionConfig,omitempty"`

	// Conditions are the latest observations of the distribution's state.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AvailableReplicas is the number of available server pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// ServiceURL is the in-cluster URL of the server.
	// +optional
	ServiceURL string `json:"serviceURL,omitempty"`

	// RouteURL is the external URL of the server, when exposed.
	// +optional
	RouteURL string `json:"routeURL,omitempty"`
}

// LlamaStackDistribution runs a Llama Stack server.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=llsd
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Operator Version",type="string",JSONPath=".status.version.operatorVersion"
// +kubebuilder:printcolumn:name="Server Version",type="string",JSONPath=".status.version.llamaStackServerVersion"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LlamaStackDistribution struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LlamaStackDistributionSpec   `json:"spec"`
	Status LlamaStackDistributionStatus `json:"status,omitempty"`
}

// LlamaStackDistributionList is a list of LlamaStackDistribution.
//
// +kubebuilder:object:root=true
type LlamaStackDistributionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LlamaStackDistribution `json:"items"`
}
