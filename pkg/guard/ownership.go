package guard

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
	// UID of the CR: an object whose controller reference is this CR (its
	// kind, name and UID) is the CR's own even without the operator's
	// marks: the upstream operator this one replaces made it for the CR,
	// and it is taken over in place (TakesOver), never a conflict. Empty:
	// nothing is taken over.
	UID types.UID
}

// TakesOver says whether an object that is not the operator's by its marks
// (Check refuses it) is the CR's own all the same: its controller reference
// is this CR, by kind, name and UID. Only the CR's own controller can have
// set that reference (a UID is not guessed), so a user's object of the name
// never qualifies.
func (o Ownership) TakesOver(refs []metav1.OwnerReference) bool {
	if o.UID == "" {
		return false
	}
	c := metav1.GetControllerOfNoCopy(&metav1.ObjectMeta{OwnerReferences: refs})
	if c == nil || c.UID != o.UID || c.Kind != o.Owner.Kind || c.Name != o.Name {
		return false
	}
	gv, err := schema.ParseGroupVersion(c.APIVersion)
	return err == nil && gv.Group == o.Owner.Group
}

// TakeOverMarks are the labels and annotations that make an object the
// operator's for this CR's release (what Check and Helm's adoption look
// for); its controller reference, the CR's already, is left as it is.
func (o Ownership) TakeOverMarks() (labels, annotations map[string]string) {
	labels = map[string]string{o.Label: "true"}
	if o.Release == "" {
		return labels, nil
	}
	labels[LabelHelmManagedBy] = "Helm"
	return labels, map[string]string{AnnotationReleaseName: o.Release, AnnotationReleaseNamespace: o.Namespace}
}

// LabelHelmManagedBy is the label Helm requires, with the value Helm, on an
// object it adopts into a release.
const LabelHelmManagedBy = "app.kubernetes.io/managed-by"

// Conflicts are every object in the way of a manifest, at once (so that a
// user does not go round once per object).
type Conflicts []*Conflict

func (cs Conflicts) Error() string {
	if len(cs) == 1 {
		return cs[0].Error()
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, c.Object+" ("+c.Why+")")
	}
	return fmt.Sprintf("%d objects exist that were not created by the operator for this resource: %s; the operator neither overwrites nor deletes them: %s",
		len(cs), strings.Join(parts, "; "), cs.advice())
}

// advice is what to do about the objects in the way.
func (cs Conflicts) advice() string {
	for _, c := range cs {
		if c.holdsData() {
			return claimAdvice
		}
	}
	return "rename or delete those objects, or rename the custom resource"
}

// keepClaim is what to do about a claim in the way: never delete it, it
// may hold data.
const keepClaim = "do not delete it to make way (its data goes with it); rename the custom resource, or move the claim's data to a claim of another name first"

// claimAdvice is keepClaim among other objects.
const claimAdvice = "a PersistentVolumeClaim among them may hold data: " + keepClaim + "; rename or delete the other objects"

func (c *Conflict) holdsData() bool { return strings.HasPrefix(c.Object, "PersistentVolumeClaim ") }

// Conflict is an object of a name the operator wants that it did not create.
type Conflict struct {
	// Object is "Kind namespace/name".
	Object string
	// Why says what marks it as not the operator's.
	Why string
}

func (c *Conflict) Error() string {
	if c.holdsData() {
		return fmt.Sprintf("%s exists and was not created by the operator for this resource (%s); the operator neither overwrites nor deletes it, and it may hold data: %s", c.Object, c.Why, keepClaim)
	}
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

// MountsClaim says whether a workload (a Deployment or StatefulSet, as
// unstructured content) mounts the claim of that name in its pod template.
// A claim the upstream operator made without an owner reference (ogx's
// claims carry none, so that the garbage collector leaves their data) is
// the CR's all the same when the CR's own workload, taken over or the
// operator's, mounts it: the gate takes it over with the workload.
func MountsClaim(workload map[string]any, claim string) bool {
	volumes, _, _ := unstructuredSlice(workload, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		vm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		pvc, ok := vm["persistentVolumeClaim"].(map[string]any)
		if ok && pvc["claimName"] == claim {
			return true
		}
	}
	return false
}

// unstructuredSlice is the list at the path, if there is one.
func unstructuredSlice(obj map[string]any, path ...string) ([]any, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = m[p]
	}
	s, ok := cur.([]any)
	return s, ok, nil
}
