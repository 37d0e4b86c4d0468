// Package v1alpha1 holds NemoGuardrails (trustyai.opendatahub.io/v1alpha1),
// in a package of its own as upstream keeps it (api/nemo_guardrails/v1alpha1):
// the same group and version as TrustyAIService's v1alpha1 and LMEvalJob.
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

	// AddToScheme adds NemoGuardrails to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Kind is the kind's name (upstream's: plural in form, NemoGuardrails).
const Kind = "NemoGuardrails"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &NemoGuardrails{}, &NemoGuardrailsList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
