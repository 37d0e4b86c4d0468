package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Storage formats.
const (
	// StoragePVC keeps the service's data on a PersistentVolumeClaim.
	StoragePVC = "PVC"
	// StorageDatabase keeps it in an external database.
	StorageDatabase = "DATABASE"
)

// Phases of status.phase, as upstream reports them.
const (
	PhaseReady    = "Ready"
	PhaseNotReady = "Not Ready"
)

// DefaultBatchSize is metrics.batchSize when it is not set.
const DefaultBatchSize = 5000

// TrustyAIServiceSpec is the desired state of a TrustyAI service.
type TrustyAIServiceSpec struct {
	// Replicas of the service; 1 when not set.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Storage says where the service keeps its data.
	Storage StorageSpec `json:"storage"`

	// Data describes the data the service reads at start (PVC mode, and
	// migration from PVC to DATABASE).
	// +optional
	Data DataSpec `json:"data,omitempty"`

	// Metrics configures the metrics computation.
	Metrics MetricsSpec `json:"metrics"`
}

// StorageSpec says where the service keeps its data.
//
// +kubebuilder:validation:XValidation:rule="self.format != 'PVC' || (has(self.folder) && size(self.folder) > 0)",message="spec.storage.folder is required when spec.storage.format is PVC: the path the data is kept under, such as /inputs"
// +kubebuilder:validation:XValidation:rule="self.format != 'PVC' || (has(self.size) && size(self.size) > 0)",message="spec.storage.size is required when spec.storage.format is PVC: the size of the claim, such as 1Gi"
type StorageSpec struct {
	// Format is PVC (a PersistentVolumeClaim the operator creates) or
	// DATABASE (an external database; with folder and data.filename also
	// set, the PVC's data is migrated into it).
	// +kubebuilder:validation:Enum=PVC;DATABASE
	Format string `json:"format"`

	// Folder is the absolute path the data is kept under (PVC mode), or read
	// from during a migration (DATABASE mode).
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[^\x00]*$`
	// +optional
	Folder string `json:"folder,omitempty"`

	// Size of the claim (PVC mode): a positive quantity such as 1Gi.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^\+?(0*[1-9][0-9]*(\.[0-9]*)?|0*\.0*[1-9][0-9]*)([KMGTPE]i|[kMGTPE]|[eE]\+?[0-9]+)?$`
	// +optional
	Size string `json:"size,omitempty"`

	// DatabaseConfigurations names the Secret of the database's connection
	// (DATABASE mode); <name>-db-credentials when not set.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	DatabaseConfigurations string `json:"databaseConfigurations,omitempty"`
}

// DataSpec describes the data the service reads.
type DataSpec struct {
	// Filename of the data file in the storage folder, such as data.csv.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[^/\x00]+$`
	// +optional
	Filename string `json:"filename,omitempty"`

	// Format of the data, such as CSV.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	// +optional
	Format string `json:"format,omitempty"`
}

// MetricsSpec configures the metrics computation.
type MetricsSpec struct {
	// Schedule is how often metrics are computed, at least every second, in
	// one of the two forms the service parses: an ISO-8601 duration in
	// weeks, days, hours, minutes and seconds, with fractions (PT30S, PT5M,
	// PT1H30M, P1D, P1DT2H30M45S, PT1.5S, which the service rounds down to
	// whole seconds), or a whole number with one unit s, m, h or d (30s, 5m,
	// 2h, 1d). The service replaces any other form (1h30m, 1.5m, 500ms) with
	// 30s and reads no years or months (P1M), so they are refused.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+[smhd]$') || self.matches('^P([0-9]+([.,][0-9]+)?W)?([0-9]+([.,][0-9]+)?D)?(T([0-9]+([.,][0-9]+)?H)?([0-9]+([.,][0-9]+)?M)?([0-9]+([.,][0-9]+)?S)?)?$')",message="must be an ISO-8601 duration in weeks, days, hours, minutes and seconds (PT30S, PT5M, PT1H30M, P1D, P1DT2H30M45S, PT1.5S) or a whole number with one unit s, m, h or d (30s, 5m, 2h, 1d): the forms the service parses; it replaces any other (1h30m, 1.5m, 500ms) with 30s and reads no years or months (P1M)"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+[smhd]$') ? !self.matches('^0+[smhd]$') : !self.matches('^P([0-9]+([.,][0-9]+)?W)?([0-9]+([.,][0-9]+)?D)?(T([0-9]+([.,][0-9]+)?H)?([0-9]+([.,][0-9]+)?M)?([0-9]+([.,][0-9]+)?S)?)?$') || self.findAll('[0-9]+([.,][0-9]+)?[WDHMS]').map(c, double(c.substring(0, size(c) - 1).replace(',', '.')) * (c.endsWith('W') ? 604800.0 : c.endsWith('D') ? 86400.0 : c.endsWith('H') ? 3600.0 : c.endsWith('M') ? 60.0 : 1.0)).sum() >= 1.0",message="must be at least 1 second: the service rounds it down to whole seconds and, at 0 (0s, PT, PT0S, PT0.5S), computes metrics without a pause"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^P([0-9]+([.,][0-9]+)?W)?([0-9]+([.,][0-9]+)?D)?(T([0-9]+([.,][0-9]+)?H)?([0-9]+([.,][0-9]+)?M)?([0-9]+([.,][0-9]+)?S)?)?$') || self.findAll('[0-9]+([.,][0-9]+)?[WDHMS]').map(c, double(c.substring(0, size(c) - 1).replace(',', '.')) * (c.endsWith('W') ? 604800.0 : c.endsWith('D') ? 86400.0 : c.endsWith('H') ? 3600.0 : c.endsWith('M') ? 60.0 : 1.0)).sum() < 86400000000000.0",message="must be shorter than 1000000000 days, the longest ISO-8601 duration the service holds"
	Schedule string `json:"schedule"`

	// BatchSize is how many of the latest inferences a metric is computed
	// over; 5000 when not set.
	// +kubebuilder:validation:Minimum=1
	// +optional
	BatchSize *int `json:"batchSize,omitempty"`
}

// TrustyAIServiceStatus is the observed state of a TrustyAI service.
type TrustyAIServiceStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Ready or Not Ready.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Replicas is the number of available replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Conditions are the latest observations of the service's state.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Ready is the Ready condition's status.
	// Deprecated: read the condition of type Ready.
	// +optional
	Ready corev1.ConditionStatus `json:"ready,omitempty"`
}

// TrustyAIService runs a TrustyAI service: explainability and fairness
// metrics over the inferences of the model servers in its namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 59",message="metadata.name must be a DNS-1035 label of at most 59 characters (lowercase letters, digits and '-', starting with a letter): the Services <name> and <name>-tls are named after it"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Storage",type="string",JSONPath=".spec.storage.format"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TrustyAIService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TrustyAIServiceSpec   `json:"spec"`
	Status TrustyAIServiceStatus `json:"status,omitempty"`
}

// TrustyAIServiceList is a list of TrustyAIService.
//
// +kubebuilder:object:root=true
type TrustyAIServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrustyAIService `json:"items"`
}
