package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
)

// TrustyAIServiceStatus is v1's status as upstream's v1alpha1 marks it:
// phase, replicas and conditions required, conditions of its own type. It
// has v1's fields (observedGeneration included), so that nothing is pruned
// when an object is read through either version.
type TrustyAIServiceStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Ready or Not Ready.
	Phase string `json:"phase"`

	// Replicas is the number of available replicas.
	Replicas int32 `json:"replicas"`

	// Conditions are the latest observations of the service's state.
	Conditions []Condition `json:"conditions"`

	// Ready is the Ready condition's status.
	// Deprecated: read the condition of type Ready.
	// +optional
	Ready corev1.ConditionStatus `json:"ready,omitempty"`
}

// Condition is an observation of the service's state (upstream's
// v1alpha1 shape, plus v1's observedGeneration).
type Condition struct {
	Type   string                 `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	ObservedGeneration int64       `json:"observedGeneration,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message"`
}

// TrustyAIService runs a TrustyAI service (served for clients of upstream's
// v1alpha1; stored as v1).
//
// +kubebuilder:object:root=true
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

	Spec   trustyv1.TrustyAIServiceSpec `json:"spec"`
	Status TrustyAIServiceStatus        `json:"status,omitempty"`
}

// TrustyAIServiceList is a list of TrustyAIService.
//
// +kubebuilder:object:root=true
type TrustyAIServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrustyAIService `json:"items"`
}
