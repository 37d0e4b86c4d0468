// Package v1 holds EvalHub (trustyai.opendatahub.io/v1), the storage
// version: the operator reads and writes v1 only. v1alpha1 is served beside
// it with the same schema, so that conversion None loses nothing either way
// (upstream converts through a webhook; its v1alpha1 is a subset of v1).
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

	// AddToScheme adds EvalHub to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Kind is the kind's name.
const Kind = "EvalHub"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &EvalHub{}, &EvalHubList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
