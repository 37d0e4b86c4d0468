// Package v1 holds the trustyai.opendatahub.io/v1 API, the storage version:
// TrustyAIService, wire-compatible with the upstream trustyai-service-operator.
// v1alpha1 is served with the same schema (conversion None, lossless).
//
// +kubebuilder:object:generate=true
// +groupName=trustyai.opendatahub.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "trustyai.opendatahub.io", Version: "v1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Kind is the kind of the custom resource.
const Kind = "TrustyAIService"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &TrustyAIService{}, &TrustyAIServiceList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
