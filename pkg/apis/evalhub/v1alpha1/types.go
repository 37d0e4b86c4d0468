// Package v1alpha1 holds EvalHub's trustyai.opendatahub.io/v1alpha1, served
// for clients of upstream's first version with v1's schema (v1's types), so
// that conversion None is lossless both ways: an object written through
// v1alpha1 reads through v1 with tenancy multi, as upstream's webhook
// converts it, and one written through v1 keeps its v1-only fields when a
// v1alpha1 client updates it (upstream's webhook drops them).
//
// +kubebuilder:object:generate=true
// +groupName=trustyai.opendatahub.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "trustyai.opendatahub.io", Version: "v1alpha1"}

var schemeBuilder = runtime.NewSchemeBuilder(func(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &EvalHub{}, &EvalHubList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
})

// AddToScheme adds EvalHub v1alpha1 to a scheme.
var AddToScheme = schemeBuilder.AddToScheme

// EvalHub is served as v1alpha1 and stored as v1.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 55",message="metadata.name must be a DNS-1035 label of at most 55 characters (lowercase letters, digits and '-', starting with a letter): the Services <name>, <name>-metrics and <name>-mcp are named after it"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EvalHub struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   evalhubv1.EvalHubSpec   `json:"spec,omitempty"`
	Status evalhubv1.EvalHubStatus `json:"status,omitempty"`
}

// EvalHubList is a list of EvalHub.
//
// +kubebuilder:object:root=true
type EvalHubList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EvalHub `json:"items"`
}
