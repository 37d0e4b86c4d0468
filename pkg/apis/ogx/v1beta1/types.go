package v1beta1

import (
	"errors"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Names and defaults of this API, shared with the controller.
const (
	// Kind is the kind name of this API.
	Kind = "OGXServer"
	// OGXServerKind is Kind under the name upstream's package gives it.
	OGXServerKind = Kind

	// DefaultContainerName is the name of the server container.
	DefaultContainerName = "ogx"
	// DefaultServerPort is the server port when spec.network.port is unset.
	DefaultServerPort int32 = 8321
	// DefaultServicePortName is the name of the Service's API port.
	DefaultServicePortName = "http"
	// DefaultLabelKey and DefaultLabelValue form the label (app: ogx) that
	// selects the server pods.
	DefaultLabelKey = "app"
	// DefaultLabelValue: see DefaultLabelKey.
	DefaultLabelValue = "ogx"
	// DefaultMountPath is where storage is mounted when
	// spec.workload.storage.mountPath is unset.
	DefaultMountPath = "/.ogx"
	// DefaultMetricsPortName is the name of the container and Service port
	// serving metrics.
	DefaultMetricsPortName = "metrics"
	// DefaultMetricsPort is the metrics port when
	// spec.monitoring.metricsPort is unset.
	DefaultMetricsPort int32 = 9464

	// AdoptStorageAnnotation names a legacy server whose PVC this OGXServer
	// takes over.
	AdoptStorageAnnotation = "ogx.io/adopt-storage"
	// AdoptNetworkingAnnotation names a legacy server whose Service and
	// Ingress this OGXServer takes over.
	AdoptNetworkingAnnotation = "ogx.io/adopt-networking"
	// AdoptedFromLabel marks an adopted object with the name of the legacy
	// server it came from.
	AdoptedFromLabel = "ogx.io/adopted-from"
	// AdoptedAtAnnotation records when an object was adopted (RFC 3339).
	AdoptedAtAnnotation = "ogx.io/adopted-at"
)

// Default quantities.
var (
	// DefaultStorageSize is the PVC size when spec.workload.storage.size is unset.
	DefaultStorageSize = resource.MustParse("10Gi")
	// DefaultServerCPURequest is upstream's declared CPU request default
	// (upstream's controller requests one core per worker instead).
	DefaultServerCPURequest = resource.MustParse("500m")
	// DefaultServerMemoryRequest is the memory request of the server
	// container when spec.workload.resources does not set one.
	DefaultServerMemoryRequest = resource.MustParse("1Gi")
)

// Condition types of status.conditions.
const (
	ConditionTypeDeploymentReady       = "DeploymentReady"
	ConditionTypeHealthCheck           = "HealthCheck"
	ConditionTypeStorageReady          = "StorageReady"
	ConditionTypeServiceReady          = "ServiceReady"
	ConditionTypeConfigGenerated       = "ConfigGenerated"
	ConditionTypeStorageAdopted        = "StorageAdopted"
	ConditionTypeNetworkingAdopted     = "NetworkingAdopted"
	ConditionTypeAdoptionConfigInvalid = "AdoptionConfigInvalid"
)

// Condition reasons of status.conditions.
const (
	ReasonDeploymentReady           = "DeploymentReady"
	ReasonDeploymentFailed          = "DeploymentFailed"
	ReasonDeploymentPending         = "DeploymentPending"
	ReasonHealthCheckPassed         = "HealthCheckPassed"
	ReasonHealthCheckFailed         = "HealthCheckFailed"
	ReasonStorageReady              = "StorageReady"
	ReasonStorageFailed             = "StorageFailed"
	ReasonServiceReady              = "ServiceReady"
	ReasonServiceFailed             = "ServiceFailed"
	ReasonConfigGenerationSucceeded = "ConfigGenerationSucceeded"
	ReasonConfigGenerationFailed    = "ConfigGenerationFailed"
	ReasonConfigGenerationInactive  = "ConfigGenerationInactive"
	ReasonStorageAdopted            = "StorageAdopted"
	ReasonNetworkingAdopted         = "NetworkingAdopted"
	ReasonAdoptionConfigInvalid     = "AdoptionConfigInvalid"
	ReasonAnnotationsValid          = "AnnotationsValid"
)

// OGXServerSpec is the desired state of an OGX server.
//
// Config comes either from spec.overrideConfig (a whole config.yaml you
// manage) or is generated from the distribution's base config plus
// providers, resources, storage and disabledAPIs; the two modes exclude each
// other.
//
// +kubebuilder:validation:XValidation:rule="!has(self.overrideConfig) || !has(self.providers)",message="spec.overrideConfig and spec.providers cannot both be set: overrideConfig replaces the generated config whole; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideConfig) || !has(self.resources)",message="spec.overrideConfig and spec.resources cannot both be set: overrideConfig replaces the generated config whole; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideConfig) || !has(self.storage)",message="spec.overrideConfig and spec.storage cannot both be set: overrideConfig replaces the generated config whole; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideConfig) || !has(self.disabledAPIs)",message="spec.overrideConfig and spec.disabledAPIs cannot both be set: overrideConfig replaces the generated config whole; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideConfig) || !has(self.baseConfig)",message="spec.overrideConfig and spec.baseConfig cannot both be set: overrideConfig replaces the generated config whole; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'inference') || !has(self.providers.inference)",message="spec.disabledAPIs lists inference while spec.providers.inference is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'vector_io') || !has(self.providers.vectorIo)",message="spec.disabledAPIs lists vector_io while spec.providers.vectorIo is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'tool_runtime') || !has(self.providers.toolRuntime)",message="spec.disabledAPIs lists tool_runtime while spec.providers.toolRuntime is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'files') || !has(self.providers.files)",message="spec.disabledAPIs lists files while spec.providers.files is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'batches') || !has(self.providers.batches)",message="spec.disabledAPIs lists batches while spec.providers.batches is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'responses') || !has(self.providers.responses)",message="spec.disabledAPIs lists responses while spec.providers.responses is set: remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || !has(self.disabledAPIs) || !self.disabledAPIs.exists(d, d == 'file_processors') || !has(self.providers.fileProcessors)",message="spec.disabledAPIs lists file_processors while spec.providers.fileProcessors is set: remove one of them"
type OGXServerSpec struct {
	// Distribution chooses the server image: a known distribution name or an
	// image reference.
	// +kubebuilder:validation:Required
	Distribution DistributionSpec `json:"distribution"`

	// Providers adds typed or custom providers, per API, to the generated
	// config. Not allowed with overrideConfig.
	// +optional
	Providers *ProvidersSpec `json:"providers,omitempty"`

	// Resources lists models to register in the generated config. Not
	// allowed with overrideConfig.
	// +optional
	Resources *ResourcesSpec `json:"resources,omitempty"`

	// Storage picks the key-value and SQL backends of the server's state in
	// the generated config. Not allowed with overrideConfig.
	// +optional
	Storage *StateStorageSpec `json:"storage,omitempty"`

	// DisabledAPIs are APIs removed from the generated config. Not allowed
	// with overrideConfig, nor for an API that has providers here.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=batches;file_processors;inference;responses;tool_runtime;vector_io;files
	DisabledAPIs []string `json:"disabledAPIs,omitempty"`

	// RegistryRefreshIntervalSeconds is how often, in seconds, the server
	// refreshes its model registry; the server's own default when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RegistryRefreshIntervalSeconds *int32 `json:"registryRefreshIntervalSeconds,omitempty"`

	// Network sets the server port, external access and the NetworkPolicy.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`

	// TLS sets the CA certificates and client identity the server uses for
	// its outbound connections to providers and backends.
	// +optional
	TLS *TLSClientConfig `json:"tls,omitempty"`

	// Workload sets the Deployment: replicas, workers, resources, storage,
	// autoscaling, disruption budget, spreading and pod overrides.
	// +optional
	Workload *WorkloadSpec `json:"workload,omitempty"`

	// Monitoring sets the metrics port and the ServiceMonitor and
	// PrometheusRule.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// BaseConfig is a ConfigMap key holding the config.yaml that generation
	// starts from, instead of the one the distribution image carries. Not
	// allowed with overrideConfig. The ConfigMap must be in this namespace
	// and labelled ogx.io/watch: "true".
	// +optional
	BaseConfig *ConfigMapKeyRef `json:"baseConfig,omitempty"`

	// OverrideConfig is a ConfigMap key holding the complete config.yaml the
	// server runs with; nothing is generated. Not allowed with providers,
	// resources, storage, disabledAPIs or baseConfig. The ConfigMap must be
	// in this namespace and labelled ogx.io/watch: "true".
	// +optional
	OverrideConfig *ConfigMapKeyRef `json:"overrideConfig,omitempty"`
}

// DistributionSpec chooses the server image: set exactly one of name and image.
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && has(self.image))",message="spec.distribution.name and spec.distribution.image cannot both be set: keep the distribution name or the image, not both"
// +kubebuilder:validation:XValidation:rule="has(self.name) || has(self.image)",message="spec.distribution needs a name (a known distribution such as starter) or an image: set one"
type DistributionSpec struct {
	// Name is a distribution the operator knows (e.g. starter); it resolves
	// to that distribution's image.
	// +optional
	Name string `json:"name,omitempty"`

	// Image is a container image reference, used as given.
	// +optional
	Image string `json:"image,omitempty"`
}

// SecretKeyRef points at one key of a Secret in the OGXServer's namespace.
// The Secret must carry the label ogx.io/watch: "true" for the operator to
// see it.
type SecretKeyRef struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Key is the key inside the Secret.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-zA-Z0-9]([a-zA-Z0-9\\-_.]*[a-zA-Z0-9])?$"
	Key string `json:"key"`
}

// ConfigMapKeyRef points at one key of a ConfigMap in the OGXServer's
// namespace. The ConfigMap must carry the label ogx.io/watch: "true" for the
// operator to see it.
type ConfigMapKeyRef struct {
	// Name is the ConfigMap's name.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Key is the key inside the ConfigMap.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-zA-Z0-9]([a-zA-Z0-9\\-_.]*[a-zA-Z0-9])?$"
	Key string `json:"key"`
}

// ResourcesSpec lists the resources registered in the generated config.
type ResourcesSpec struct {
	// Models are registered with inference providers at startup.
	// +optional
	// +kubebuilder:validation:MinItems=1
	Models []ModelConfig `json:"models,omitempty"`
}

// ModelConfig registers one model.
// +kubebuilder:validation:XValidation:rule="!has(self.provider) || self.provider.size() > 0",message="spec.resources.models[].provider is empty: give a provider ID or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.modelType) || self.modelType.size() > 0",message="spec.resources.models[].modelType is empty: give a model type or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.quantization) || self.quantization.size() > 0",message="spec.resources.models[].quantization is empty: give a quantization or omit the field"
type ModelConfig struct {
	// Name is the model's identifier.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Provider is the ID of the provider serving the model; an inference
	// provider is picked when unset.
	// +optional
	Provider string `json:"provider,omitempty"`

	// ContextLength is the model's context window, in tokens.
	// +optional
	ContextLength *int `json:"contextLength,omitempty"`

	// ModelType classifies the model (e.g. llm, embedding).
	// +optional
	ModelType string `json:"modelType,omitempty"`

	// Quantization names the model's quantization method.
	// +optional
	Quantization string `json:"quantization,omitempty"`
}

// StateStorageSpec picks the backends of the server's state.
type StateStorageSpec struct {
	// KV is the key-value backend.
	// +optional
	KV *KVStorageSpec `json:"kv,omitempty"`

	// SQL is the relational backend.
	// +optional
	SQL *SQLStorageSpec `json:"sql,omitempty"`
}

// KVStorageSpec is the key-value backend: local SQLite or Redis.
// +kubebuilder:validation:XValidation:rule="self.type != 'redis' || has(self.endpoint)",message="spec.storage.kv.endpoint is required when type is redis: set the Redis endpoint"
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || self.type == 'redis'",message="spec.storage.kv.endpoint applies only to type redis: remove it or set type: redis"
// +kubebuilder:validation:XValidation:rule="!has(self.password) || self.type == 'redis'",message="spec.storage.kv.password applies only to type redis: remove it or set type: redis"
type KVStorageSpec struct {
	// Type is the backend kind.
	// +kubebuilder:validation:Enum=sqlite;redis
	// +kubebuilder:default:="sqlite"
	// +optional
	Type string `json:"type,omitempty"`

	// Endpoint is the Redis URL; for type redis only, and required there.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// Password is the Secret key holding the Redis password; for type redis
	// only.
	// +optional
	Password *SecretKeyRef `json:"password,omitempty"`
}

// SQLStorageSpec is the relational backend: local SQLite or PostgreSQL.
// +kubebuilder:validation:XValidation:rule="self.type != 'postgres' || has(self.connectionString)",message="spec.storage.sql.connectionString is required when type is postgres: reference the Secret key holding it"
// +kubebuilder:validation:XValidation:rule="!has(self.connectionString) || self.type == 'postgres'",message="spec.storage.sql.connectionString applies only to type postgres: remove it or set type: postgres"
type SQLStorageSpec struct {
	// Type is the backend kind.
	// +kubebuilder:validation:Enum=sqlite;postgres
	// +kubebuilder:default:="sqlite"
	// +optional
	Type string `json:"type,omitempty"`

	// ConnectionString is the Secret key holding the PostgreSQL connection
	// string; for type postgres only, and required there.
	// +optional
	ConnectionString *SecretKeyRef `json:"connectionString,omitempty"`
}

// NetworkSpec sets how the server is reached.
type NetworkSpec struct {
	// Port is the port the server listens on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default:=8321
	Port int32 `json:"port,omitempty"`

	// TLS names a TLS Secret for serving HTTPS; plain HTTP when unset.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// ExternalAccess exposes the server outside the cluster.
	// +optional
	ExternalAccess *ExternalAccessConfig `json:"externalAccess,omitempty"`

	// Policy sets the NetworkPolicy the operator manages; a default policy
	// when unset.
	// +optional
	Policy *NetworkPolicySpec `json:"policy,omitempty"`
}

// TLSSpec is the server's own certificate.
type TLSSpec struct {
	// SecretName is a kubernetes.io/tls Secret in this namespace, labelled
	// ogx.io/watch: "true".
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
}

// ExternalAccessConfig exposes the server outside the cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.hostname) || self.hostname.size() > 0",message="spec.network.externalAccess.hostname is empty: give a hostname or omit the field"
type ExternalAccessConfig struct {
	// Enabled creates the external endpoint.
	// +optional
	// +kubebuilder:default:=false
	Enabled bool `json:"enabled,omitempty"`

	// Hostname is the external host name; generated when unset.
	// +optional
	Hostname string `json:"hostname,omitempty"`
}

// NetworkPolicySpec sets the NetworkPolicy the operator manages for the server.
type NetworkPolicySpec struct {
	// Enabled creates the NetworkPolicy; false removes it.
	// +optional
	// +kubebuilder:default:=true
	Enabled *bool `json:"enabled,omitempty"`

	// PolicyTypes are the directions the policy enforces, as in a
	// NetworkPolicy.
	// +optional
	// +kubebuilder:validation:items:Enum=Ingress;Egress
	PolicyTypes []networkingv1.PolicyType `json:"policyTypes,omitempty"`

	// Ingress are extra rules for incoming traffic, besides the operator's
	// (this namespace and the operator's, on the server port).
	// +optional
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`

	// Egress are rules for outgoing traffic; outgoing traffic is open when
	// none are given.
	// +optional
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress,omitempty"`
}

// TLSClientConfig is the TLS the server uses when it connects out.
type TLSClientConfig struct {
	// Trust adds CA certificates to verify providers and backends with.
	// +optional
	Trust *TrustConfig `json:"trust,omitempty"`

	// Identity is the client certificate presented for mutual TLS.
	// +optional
	Identity *IdentityConfig `json:"identity,omitempty"`
}

// TrustConfig lists extra CA certificates.
type TrustConfig struct {
	// CACertificates are ConfigMap keys holding PEM CA certificates, joined
	// into one bundle. Each ConfigMap must be in this namespace and labelled
	// ogx.io/watch: "true".
	// +optional
	// +kubebuilder:validation:MinItems=1
	CACertificates []ConfigMapKeyRef `json:"caCertificates,omitempty"`
}

// IdentityConfig is a client certificate and its key.
type IdentityConfig struct {
	// Cert is the ConfigMap key holding the PEM client certificate.
	// +kubebuilder:validation:Required
	Cert ConfigMapKeyRef `json:"cert"`

	// Key is the Secret key holding the PEM private key.
	// +kubebuilder:validation:Required
	Key SecretKeyRef `json:"key"`
}

// MonitoringSpec sets the Prometheus integration.
type MonitoringSpec struct {
	// Enabled creates the ServiceMonitor and PrometheusRule (when their CRDs
	// exist) and turns on the server's metrics endpoint.
	// +optional
	// +kubebuilder:default:=true
	Enabled *bool `json:"enabled,omitempty"`

	// MetricsPort is the port serving /metrics.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	MetricsPort *int32 `json:"metricsPort,omitempty"`
}

// WorkloadSpec sets the server's Deployment.
type WorkloadSpec struct {
	// Replicas is the number of server pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default:=1
	Replicas *int32 `json:"replicas,omitempty"`

	// Workers is the number of server worker processes per pod; one when
	// unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Workers *int32 `json:"workers,omitempty"`

	// Resources are the server container's requests, limits and claims.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// ResourceClaims are the pod's dynamic resource claims, which the
	// container uses by name through resources.claims.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=name
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`

	// Autoscaling adds a HorizontalPodAutoscaler.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// Storage adds a PersistentVolumeClaim mounted into the server.
	// +optional
	Storage *PVCStorageSpec `json:"storage,omitempty"`

	// PodDisruptionBudget adds a PodDisruptionBudget.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// TopologySpreadConstraints spread the pods; defaults apply for several
	// replicas when unset.
	// +optional
	// +kubebuilder:validation:MinItems=1
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Overrides change the pod template directly.
	// +optional
	Overrides *WorkloadOverrides `json:"overrides,omitempty"`
}

// AutoscalingSpec sets the HorizontalPodAutoscaler.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.maxReplicas >= self.minReplicas",message="spec.workload.autoscaling.maxReplicas is below minReplicas: raise maxReplicas or lower minReplicas"
type AutoscalingSpec struct {
	// MinReplicas is the fewest pods.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilizationPercentage scales on average CPU use.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// TargetMemoryUtilizationPercentage scales on average memory use.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// PVCStorageSpec is the server's persistent volume.
// +kubebuilder:validation:XValidation:rule="!has(self.mountPath) || self.mountPath.size() > 0",message="spec.workload.storage.mountPath is empty: give a path or omit it to use /.ogx"
// +kubebuilder:validation:XValidation:rule="!has(self.size) || quantity(self.size).isGreaterThan(quantity('0'))",message="spec.workload.storage.size must be a quantity above zero (e.g. 10Gi): fix it or omit it to use 10Gi"
type PVCStorageSpec struct {
	// Size is the volume's requested size; 10Gi when unset.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// MountPath is where the volume is mounted in the server container.
	// +optional
	// +kubebuilder:default:="/.ogx"
	MountPath string `json:"mountPath,omitempty"`
}

// PodDisruptionBudgetSpec sets the PodDisruptionBudget: exactly one of
// minAvailable and maxUnavailable.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) || has(self.maxUnavailable)",message="spec.workload.podDisruptionBudget needs minAvailable or maxUnavailable: set one"
// +kubebuilder:validation:XValidation:rule="!(has(self.minAvailable) && has(self.maxUnavailable))",message="spec.workload.podDisruptionBudget.minAvailable and maxUnavailable cannot both be set: keep one"
type PodDisruptionBudgetSpec struct {
	// MinAvailable is how many pods (or what percentage) must stay up.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable is how many pods (or what percentage) may be down.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// WorkloadOverrides change the pod template directly.
// +kubebuilder:validation:XValidation:rule="!has(self.serviceAccountName) || self.serviceAccountName.size() > 0",message="spec.workload.overrides.serviceAccountName is empty: give a ServiceAccount name or omit the field"
type WorkloadOverrides struct {
	// ServiceAccountName runs the pods as this ServiceAccount instead of
	// the one the operator creates.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// Env are environment variables of the server container; one named like
	// an operator-set variable replaces it.
	// +optional
	// +kubebuilder:validation:MinItems=1
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Command replaces the container's entrypoint.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	Command []string `json:"command,omitempty"`

	// Args replaces the container's arguments.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	Args []string `json:"args,omitempty"`

	// Volumes are added to the pod.
	// +optional
	// +kubebuilder:validation:MinItems=1
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// VolumeMounts are added to the server container.
	// +optional
	// +kubebuilder:validation:MinItems=1
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// OGXServerPhase summarizes the server's state.
// +kubebuilder:validation:Enum=Pending;Initializing;Ready;Failed;Terminating
type OGXServerPhase string

// Phases of status.phase.
const (
	OGXServerPhasePending      OGXServerPhase = "Pending"
	OGXServerPhaseInitializing OGXServerPhase = "Initializing"
	OGXServerPhaseReady        OGXServerPhase = "Ready"
	OGXServerPhaseFailed       OGXServerPhase = "Failed"
	OGXServerPhaseTerminating  OGXServerPhase = "Terminating"
)

// OGXServerStatus is the observed state of an OGX server.
type OGXServerStatus struct {
	// Phase summarizes the server's state.
	Phase OGXServerPhase `json:"phase,omitempty"`

	// Version holds the operator's and the running server's versions.
	Version VersionInfo `json:"version,omitempty"`

	// DistributionConfig is what the running server reports: its
	// distribution and providers.
	DistributionConfig DistributionConfig `json:"distributionConfig,omitempty"`

	// ResolvedDistribution is the image and base config the server was
	// deployed from.
	// +optional
	ResolvedDistribution *ResolvedDistributionStatus `json:"resolvedDistribution,omitempty"`

	// ConfigGeneration describes the last generated config; unset when the
	// config is not generated.
	// +optional
	ConfigGeneration *ConfigGenerationStatus `json:"configGeneration,omitempty"`

	// Conditions are the latest observations of the server's state.
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AvailableReplicas is the number of ready server pods.
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// ServiceURL is the server's in-cluster URL.
	ServiceURL string `json:"serviceURL,omitempty"`

	// ExternalURL is the server's URL outside the cluster, when external
	// access is enabled.
	// +optional
	ExternalURL *string `json:"externalURL,omitempty"`
}

// VersionInfo holds versions.
type VersionInfo struct {
	// OperatorVersion is the operator's version.
	OperatorVersion string `json:"operatorVersion,omitempty"`
	// ServerVersion is the version the running server reports.
	ServerVersion string `json:"serverVersion,omitempty"`
	// LastUpdated is when these versions were last read.
	LastUpdated metav1.Time `json:"lastUpdated,omitempty"`
}

// DistributionConfig is what the running server reports about itself.
type DistributionConfig struct {
	// ActiveDistribution is the distribution name in use, or "custom" for
	// an image.
	ActiveDistribution string `json:"activeDistribution,omitempty"`
	// Providers are the providers the server reports.
	Providers []ProviderInfo `json:"providers,omitempty"`
	// AvailableDistributions maps each known distribution name to its image.
	AvailableDistributions map[string]string `json:"availableDistributions,omitempty"`
}

// ProviderInfo is one provider as the running server reports it.
type ProviderInfo struct {
	// API is the API the provider serves.
	API string `json:"api"`
	// ProviderID is the provider's ID.
	ProviderID string `json:"provider_id"`
	// ProviderType is the provider's type (e.g. remote::vllm).
	ProviderType string `json:"provider_type"`
	// Config is the provider's config as reported.
	Config apiextensionsv1.JSON `json:"config"`
	// Health is the provider's reported health.
	Health ProviderHealthStatus `json:"health"`
}

// ProviderHealthStatus is a provider's reported health.
type ProviderHealthStatus struct {
	// Status is the health verdict.
	Status string `json:"status"`
	// Message explains the verdict.
	Message string `json:"message"`
}

// ResolvedDistributionStatus is the image and base config a server was
// deployed from.
type ResolvedDistributionStatus struct {
	// Image is the image reference, with its digest when known.
	Image string `json:"image,omitempty"`
	// ConfigSource is where the base config came from (e.g. configmap,
	// oci-label).
	ConfigSource string `json:"configSource,omitempty"`
	// ConfigHash is the SHA-256 of the base config.
	ConfigHash string `json:"configHash,omitempty"`
}

// ConfigGenerationStatus describes the last generated config.
type ConfigGenerationStatus struct {
	// ObservedGeneration is the metadata.generation the config was
	// generated from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ConfigMapName is the ConfigMap holding the generated config.
	ConfigMapName string `json:"configMapName,omitempty"`
	// GeneratedAt is when the config was generated.
	GeneratedAt metav1.Time `json:"generatedAt,omitempty"`
	// ProviderCount is the number of providers in the config.
	ProviderCount int `json:"providerCount,omitempty"`
	// ResourceCount is the number of registered resources in the config.
	ResourceCount int `json:"resourceCount,omitempty"`
	// ConfigVersion is the config.yaml schema version.
	ConfigVersion int `json:"configVersion,omitempty"`
}

// OGXServer runs an OGX server: a Deployment of a distribution image with
// its config, Service, storage, NetworkPolicy and optional external access,
// autoscaling and monitoring.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Distribution",type="string",JSONPath=".status.resolvedDistribution.image",priority=1
// +kubebuilder:printcolumn:name="Config",type="string",JSONPath=".status.configGeneration.configMapName",priority=1
// +kubebuilder:printcolumn:name="Providers",type="integer",JSONPath=".status.configGeneration.providerCount"
// +kubebuilder:printcolumn:name="Operator Version",type="string",JSONPath=".status.version.operatorVersion",priority=1
// +kubebuilder:printcolumn:name="Server Version",type="string",JSONPath=".status.version.serverVersion",priority=1
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OGXServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OGXServerSpec   `json:"spec"`
	Status OGXServerStatus `json:"status,omitempty"`
}

// OGXServerList is a list of OGXServers.
//
// +kubebuilder:object:root=true
type OGXServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OGXServer `json:"items"`
}

// HasOverrideConfig reports whether spec.overrideConfig names a ConfigMap key.
func (r *OGXServer) HasOverrideConfig() bool {
	o := r.Spec.OverrideConfig
	return o != nil && o.Name != "" && o.Key != ""
}

// HasDeclarativeConfig reports whether any field that feeds config
// generation is set: providers, resources, storage or disabledAPIs.
func (r *OGXServer) HasDeclarativeConfig() bool {
	s := r.Spec
	return s.Providers != nil || s.Resources != nil || s.Storage != nil || len(s.DisabledAPIs) > 0
}

// GetAdoptStorageSource returns the value of the adopt-storage annotation
// (the legacy server whose PVC to take over), or "".
func (r *OGXServer) GetAdoptStorageSource() string {
	return r.Annotations[AdoptStorageAnnotation]
}

// GetAdoptNetworkingSource returns the value of the adopt-networking
// annotation (the legacy server whose Service and Ingress to take over), or "".
func (r *OGXServer) GetAdoptNetworkingSource() string {
	return r.Annotations[AdoptNetworkingAnnotation]
}

// GetEffectivePVCName returns the PVC the server uses: <source>-pvc when a
// valid adopt-storage annotation names a source, else <name>-pvc.
func (r *OGXServer) GetEffectivePVCName() string {
	if src := r.GetAdoptStorageSource(); src != "" && ValidateAdoptionAnnotation(src) == nil {
		return src + "-pvc"
	}
	return r.Name + "-pvc"
}

// dnsLabel is an RFC 1123 label of at most 63 characters.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?$`)

// ValidateAdoptionAnnotation checks that an adoption annotation's value is an
// RFC 1123 DNS label: 1 to 63 lowercase letters, digits or '-', starting and
// ending with a letter or digit.
func ValidateAdoptionAnnotation(value string) error {
	switch {
	case value == "":
		return errors.New("adoption annotation value is empty: give the name of the server to adopt from")
	case len(value) > 63:
		return fmt.Errorf("adoption annotation value %q is longer than 63 characters", value)
	case !dnsLabel.MatchString(value):
		return fmt.Errorf("adoption annotation value %q is not an RFC 1123 DNS label (lowercase letters, digits and '-', starting and ending with a letter or digit)", value)
	}
	return nil
}
