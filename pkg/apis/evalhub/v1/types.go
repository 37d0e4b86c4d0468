package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tenancy modes of spec.tenancy (upstream's values).
const (
	// TenancyMulti: the EvalHub serves the tenant namespaces granted to it
	// (the default).
	TenancyMulti = "multi"
	// TenancySingle: the EvalHub serves its own namespace only.
	TenancySingle = "single"
)

// Database types of spec.database.type (upstream's values).
const (
	DatabaseSQLite     = "sqlite"
	DatabasePostgreSQL = "postgresql"
)

// Phases of status.phase and status.mcp.phase (upstream's values).
const (
	PhasePending  = "Pending"
	PhaseReady    = "Ready"
	PhaseError    = "Error"
	PhaseDisabled = "Disabled"
)

// DatabaseSpec is where the server keeps evaluations.
type DatabaseSpec struct {
	// Type is sqlite (a file in the pod: one replica, data lost with the
	// pod) or postgresql (spec.database.secret names the connection).
	// +kubebuilder:validation:Enum=sqlite;postgresql
	Type string `json:"type"`
	// Secret is the name of a Secret of the CR's namespace whose key db-url
	// is the PostgreSQL connection URL; required for postgresql.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Secret string `json:"secret,omitempty"`
	// MaxOpenConns caps the open PostgreSQL connections.
	// +kubebuilder:default:=25
	// +optional
	MaxOpenConns int `json:"maxOpenConns,omitempty"`
	// MaxIdleConns caps the idle PostgreSQL connections.
	// +kubebuilder:default:=5
	// +optional
	MaxIdleConns int `json:"maxIdleConns,omitempty"`
}

// OTELSpec turns on OpenTelemetry export; its presence enables it.
type OTELSpec struct {
	// ExporterType is otlp-grpc, otlp-http or stdout.
	// +kubebuilder:default:="otlp-grpc"
	// +kubebuilder:validation:Enum=otlp-grpc;otlp-http;stdout
	// +optional
	ExporterType string `json:"exporterType,omitempty"`
	// ExporterEndpoint is the collector's address.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	ExporterEndpoint string `json:"exporterEndpoint,omitempty"`
	// ExporterInsecure sends without TLS.
	// +kubebuilder:default:=false
	// +optional
	ExporterInsecure bool `json:"exporterInsecure,omitempty"`
	// SamplingRatio is the share of traces kept, "0" to "1".
	// +kubebuilder:default:="1.0"
	// +kubebuilder:validation:MaxLength=32
	// +optional
	SamplingRatio string `json:"samplingRatio,omitempty"`
	// EnableTracing exports traces.
	// +kubebuilder:default:=true
	// +optional
	EnableTracing bool `json:"enableTracing,omitempty"`
	// EnableMetrics exports metrics.
	// +optional
	EnableMetrics bool `json:"enableMetrics,omitempty"`
	// EnableLogs exports logs.
	// +optional
	EnableLogs bool `json:"enableLogs,omitempty"`
	// TracerTimeout is the trace export timeout, a Go duration ("30s").
	// +kubebuilder:validation:Pattern=`^((\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TracerTimeout string `json:"tracerTimeout,omitempty"`
	// TracerBatchInterval is the trace batch interval, a Go duration ("5s").
	// +kubebuilder:validation:Pattern=`^((\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TracerBatchInterval string `json:"tracerBatchInterval,omitempty"`
	// EnableJobContainerLogs exports the evaluation jobs' container logs
	// when they end (needs enableLogs).
	// +optional
	EnableJobContainerLogs bool `json:"enableJobContainerLogs,omitempty"`
	// ServiceName replaces the service.name resource attribute.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// EnableEcsResourceDetection adds ECS resource attributes.
	// +optional
	EnableEcsResourceDetection bool `json:"enableEcsResourceDetection,omitempty"`
	// DisableRedirectOtelLogs keeps the SDK's own logs out of the server's log.
	// +optional
	DisableRedirectOtelLogs bool `json:"disableRedirectOtelLogs,omitempty"`
	// DisableDatabaseOtelScans stops database query spans.
	// +optional
	DisableDatabaseOtelScans bool `json:"disableDatabaseOtelScans,omitempty"`
	// MetricExportInterval is the metrics export interval, a Go duration.
	// +kubebuilder:validation:Pattern=`^((\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	MetricExportInterval string `json:"metricExportInterval,omitempty"`
}

// EvalHubMCPSpec runs an MCP server in front of the EvalHub.
type EvalHubMCPSpec struct {
	// Enabled runs the MCP server (off when unset).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Replicas of the MCP server (1 when unset).
	// +kubebuilder:validation:Minimum=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Transport the MCP server offers its clients: http (streamable HTTP)
	// or http-sse.
	// +kubebuilder:default:="http"
	// +kubebuilder:validation:Enum="http-sse";"http"
	// +optional
	Transport string `json:"transport,omitempty"`
	// EvalHubTransport sets EVALHUB_TRANSPORT when it differs from transport.
	// +kubebuilder:validation:Enum="http-sse";"http"
	// +optional
	EvalHubTransport string `json:"evalHubTransport,omitempty"`
	// Env adds to or overrides the MCP server's environment.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Resources of the MCP server's container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Image replaces the MCP server's image.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Image string `json:"image,omitempty"`
	// AuthSecret is the name of a Secret whose key token the MCP server
	// presents to the EvalHub's API.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AuthSecret string `json:"authSecret,omitempty"`
}

// EvalHubMCPStatus is the MCP server's state.
type EvalHubMCPStatus struct {
	// Phase is Pending, Ready, Error or Disabled.
	// +kubebuilder:validation:Enum=Pending;Ready;Error;Disabled
	// +optional
	Phase string `json:"phase,omitempty"`
	// Ready is true when the MCP server's Deployment is available.
	Ready bool `json:"ready"`
	// URL is where MCP clients reach it.
	// +optional
	URL string `json:"url,omitempty"`
	// Conditions of the MCP server.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MLFlowSpec is how the EvalHub reaches MLflow.
type MLFlowSpec struct {
	// TLS is the trust for MLflow's certificate.
	// +optional
	TLS *MLFlowTLSSpec `json:"tls,omitempty"`
}

// MLFlowTLSSpec adds CA certificates for MLflow.
type MLFlowTLSSpec struct {
	// CABundle is a ConfigMap key of the CR's namespace with PEM CA
	// certificates trusted besides the platform's.
	// +optional
	CABundle *CABundleReference `json:"caBundle,omitempty"`
}

// CABundleReference is a key of a ConfigMap of the CR's namespace.
type CABundleReference struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key holding the certificates.
	// +kubebuilder:default:="ca-bundle.crt"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// EvalHubSpec is the desired state of an EvalHub.
type EvalHubSpec struct {
	// Replicas of the server.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default:=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Env adds to the server's environment.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Providers are the evaluation providers the server offers, by name
	// (ConfigMaps in the operator's namespace labelled with the name).
	// +kubebuilder:default:={"garak","garak-kfp","lm-evaluation-harness"}
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	Providers []string `json:"providers,omitempty"`
	// Collections are the benchmark collections the server offers, by name.
	// +kubebuilder:default:={"leaderboard-v2","safety-and-fairness-v1","toxicity-and-ethical-principles"}
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	Collections []string `json:"collections,omitempty"`
	// Database is where evaluations are kept.
	// +optional
	Database *DatabaseSpec `json:"database,omitempty"`
	// Otel turns on OpenTelemetry export.
	// +optional
	Otel *OTELSpec `json:"otel,omitempty"`
	// MCP runs an MCP server for this EvalHub.
	// +optional
	MCP *EvalHubMCPSpec `json:"mcp,omitempty"`
	// MLFlow is how the server reaches MLflow.
	// +optional
	MLFlow *MLFlowSpec `json:"mlflow,omitempty"`
	// Tenancy: multi serves the tenant namespaces granted to this EvalHub
	// (docs/security.md), single its own namespace only.
	// +kubebuilder:default:=multi
	// +kubebuilder:validation:Enum=single;multi
	// +optional
	Tenancy string `json:"tenancy,omitempty"`
}

// EvalHubStatus is the observed state of an EvalHub.
type EvalHubStatus struct {
	// ObservedGeneration is the generation the status describes (this
	// operator's addition).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is Pending, Ready or Error.
	// +kubebuilder:validation:Enum=Pending;Ready;Error
	// +optional
	Phase string `json:"phase,omitempty"`
	// Replicas is the desired number of server replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of ready server replicas.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions are the latest observations.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Ready is the Ready condition's status.
	// +optional
	Ready corev1.ConditionStatus `json:"ready,omitempty"`
	// URL is where the server is reached.
	// +optional
	URL string `json:"url,omitempty"`
	// ActiveProviders are the providers the server was given.
	// +optional
	ActiveProviders []string `json:"activeProviders,omitempty"`
	// ActiveCollections are the collections the server was given.
	// +optional
	ActiveCollections []string `json:"activeCollections,omitempty"`
	// LastUpdateTime is when the status last changed.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// TenantNamespaces are the namespaces this EvalHub serves (this
	// operator's addition).
	// +optional
	TenantNamespaces []string `json:"tenantNamespaces,omitempty"`
	// MCP is the MCP server's state.
	// +optional
	MCP *EvalHubMCPStatus `json:"mcp,omitempty"`
}

// EvalHub runs an evaluation hub server (eval-hub) and optionally its MCP
// server.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 55",message="metadata.name must be a DNS-1035 label of at most 55 characters (lowercase letters, digits and '-', starting with a letter): the Services <name>, <name>-metrics and <name>-mcp are named after it"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EvalHub struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EvalHubSpec   `json:"spec,omitempty"`
	Status EvalHubStatus `json:"status,omitempty"`
}

// EvalHubList is a list of EvalHub.
//
// +kubebuilder:object:root=true
type EvalHubList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EvalHub `json:"items"`
}
