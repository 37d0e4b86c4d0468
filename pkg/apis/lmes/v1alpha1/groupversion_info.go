// Package v1alpha1 holds LMEvalJob (trustyai.opendatahub.io/v1alpha1), in a
// package of its own as upstream keeps it (api/lmes/v1alpha1): the same
// group and version as TrustyAIService's v1alpha1.
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

	// AddToScheme adds LMEvalJob to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Kind is the kind's name.
const Kind = "LMEvalJob"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &LMEvalJob{}, &LMEvalJobList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
