// Package v1beta1 holds the ogx.io/v1beta1 API: OGXServer, wire-compatible
// with the upstream ogx-k8s-operator's CRD.
//
// +kubebuilder:object:generate=true
// +groupName=ogx.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "ogx.io", Version: "v1beta1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &OGXServer{}, &OGXServerList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
