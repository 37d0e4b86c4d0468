// Package v1alpha1 holds the llamastack.io/v1alpha1 API: LlamaStackDistribution,
// wire-compatible with the upstream llama-stack-k8s-operator.
//
// +kubebuilder:object:generate=true
// +groupName=llamastack.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "llamastack.io", Version: "v1alpha1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &LlamaStackDistribution{}, &LlamaStackDistributionList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
