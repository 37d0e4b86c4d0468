package guard

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Helm's release annotations on every object it applies.
const (
	AnnotationReleaseName      = "meta.helm.sh/release-name"
	AnnotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// Owner annotations that helm-operator-plugins puts on objects kept by
// helm.sh/resource-policy (which carry no owner reference, so that the
// garbage collector leaves them).
const (
	annotationPrimaryResource     = "operator-sdk/primary-resource"
	annotationPrimaryResourceType = "operator-sdk/primary-resource-type"
)

// Ownership describes what the operator's objects of one CR carry.
type Ownership struct {
	// Label ("<key>=true") marks every object the operator creates.
	Label string
	// Release is the Helm release of the CR; empty for objects the operator
	// writes itself, outside Helm.
	Release string
	// Legacy is the name earlier versions gave the release, whose objects
	// are the CR's too until an upgrade renames them; empty when the same.
	Legacy string
	// Owner is the CR: its kind, namespace and name.
	Owner schema.GroupKind
	// Namespace and Name of the CR.
	Namespace, Name string
}

// Conflict is an object of a name the operator wants that it did not create.
type Conflict struct {
	// Object is "Kind namespace/name".
	Object string
	// Why says what marks it as not the operator's.
	Why string
}

func (c *Conflict) Error() string {
	return fmt.Sprintf("%s exists and was not created by the operator for this resource (%s); the operator neither overwrites nor deletes it: rename or delete that object, or rename the custom resource", c.Object, c.Why)
}

// Check returns nil when the object is the operator's for this CR, and a
// *Conflict naming the object otherwise. An object is the operator's when it
// carries the operator's label, Helm's annotations of this release (for Helm
// objects) and, as its controller, a CR of this kind and name (or, for
// objects Helm keeps, the owner annotations of this CR). A controller
// reference with another UID is an earlier CR of the same name, whose objects
// a new CR adopts.
func (o Ownership) Check(object string, labels, annotations map[string]string, refs []metav1.OwnerReference) error {
	conflict := func(why string) error { return &Conflict{Object: object, Why: why} }
	if labels[o.Label] != "true" {
		return conflict("it lacks the label " + o.Label + "=true")
	}
	if o.Release != "" {
		rel := annotations[AnnotationReleaseName]
		if (rel != o.Release && (o.Legacy == "" || rel != o.Legacy)) || annotations[AnnotationReleaseNamespace] != o.Namespace {
			return conflict(fmt.Sprintf("it does not belong to Helm release %s/%s", o.Namespace, o.Release))
		}
	}
	if c := metav1.GetControllerOfNoCopy(&metav1.ObjectMeta{OwnerReferences: refs}); c != nil {
		gv, err := schema.ParseGroupVersion(c.APIVersion)
		if err != nil || gv.Group != o.Owner.Group || c.Kind != o.Owner.Kind || c.Name != o.Name {
			return conflict(fmt.Sprintf("its controller is %s %s", c.Kind, c.Name))
		}
		return nil
	}
	if annotations[annotationPrimaryResource] == o.Namespace+"/"+o.Name && annotations[annotationPrimaryResourceType] == o.Owner.String() {
		return nil
	}
	return conflict(fmt.Sprintf("it is not controlled by %s %s", o.Owner.Kind, o.Name))
}
