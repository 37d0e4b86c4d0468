// Package legacy names the objects of the kind OGXServer succeeds
// (LlamaStackDistribution, llamastack.io/v1alpha1) that an OGXServer may
// adopt through upstream's annotations: its claim and its Service.
package legacy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
)

// GVK is the older kind's.
var GVK = schema.GroupVersionKind{Group: "llamastack.io", Version: "v1alpha1", Kind: "LlamaStackDistribution"}

// ClaimName is the claim of an old server of that name (this operator's
// and upstream's name it alike).
func ClaimName(name string) string { return naming.ChildName(name, "-pvc") }

// ServiceName is the Service of an old server of that name.
func ServiceName(name string) string { return naming.ServiceName(name, "-service") }

// ControlledBy says whether the object's controller is the old server of
// that name.
func ControlledBy(obj metav1.Object, name string) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == GVK.Group && ref.Kind == GVK.Kind && ref.Name == name
}

// Controller describes the object's controller ("" when none), for messages.
func Controller(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return ""
	}
	return ref.APIVersion + "/" + ref.Kind + " " + ref.Name
}

// What a claim kept by this operator's release of an old server carries
// (helm.sh/resource-policy: keep, so no owner reference): operator-lib's
// owner annotations.
const (
	annotationPrimaryResource     = "operator-sdk/primary-resource"
	annotationPrimaryResourceType = "operator-sdk/primary-resource-type"
)

// KeptBy says whether this operator's release of the old server
// namespace/name kept the object (its owner annotations name that server,
// and it carries the operator's label, managedLabel).
func KeptBy(obj metav1.Object, namespace, name, managedLabel string) bool {
	a := obj.GetAnnotations()
	return a[annotationPrimaryResourceType] == GVK.GroupKind().String() && a[annotationPrimaryResource] == namespace+"/"+name && obj.GetLabels()[managedLabel] == "true"
}

// Keeper is "<type> <namespace>/<name>" of the CR whose release kept the
// object, as its owner annotations say ("" when none do).
func Keeper(obj metav1.Object) string {
	a := obj.GetAnnotations()
	if a[annotationPrimaryResource] == "" {
		return ""
	}
	return a[annotationPrimaryResourceType] + " " + a[annotationPrimaryResource]
}
