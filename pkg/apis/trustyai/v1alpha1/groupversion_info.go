// Package v1alpha1 holds the trustyai.opendatahub.io/v1alpha1 API, served
// beside v1 with the same spec (v1's types) and a status of the same fields,
// so that conversion None is lossless both ways. The operator reads and
// writes v1 only.
//
// +kubebuilder:object:generate=true
// +groupName=trustyai.opendatahub.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "trustyai.opendatahub.io", Version: "v1alpha1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &TrustyAIService{}, &TrustyAIServiceList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
