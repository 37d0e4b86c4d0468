package ogx

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/legacy"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// A claim is adopted only on its own marks' proof that it is the old
// server's; another CR's claim, or nobody's, is refused with whose it is.
func TestProvenanceOfAClaim(t *testing.T) {
	cr := &ogxv1beta1.OGXServer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}}
	claim := func(mut func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old-pvc", Labels: map[string]string{}, Annotations: map[string]string{}}}
		mut(p)
		return p
	}
	controlledBy := func(apiVersion, kind, name string) func(*corev1.PersistentVolumeClaim) {
		return func(p *corev1.PersistentVolumeClaim) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(true)}}
		}
	}
	kept := func(typ, owner string, managed bool) func(*corev1.PersistentVolumeClaim) {
		return func(p *corev1.PersistentVolumeClaim) {
			p.Annotations["operator-sdk/primary-resource"], p.Annotations["operator-sdk/primary-resource-type"] = owner, typ
			if managed {
				p.Labels[release.LabelManaged] = "true"
			}
		}
	}
	oldKind := legacy.GVK.GroupKind().String()
	for _, c := range []struct {
		name  string
		pvc   *corev1.PersistentVolumeClaim
		ok    bool
		whose string
	}{
		{"upstream's claim of the old server", claim(controlledBy(legacy.GVK.GroupVersion().String(), legacy.GVK.Kind, "old")), true, ""},
		{"this operator's kept claim of the old server", claim(kept(oldKind, "ns/old", true)), true, ""},
		{"adopted by this server (the operator's annotation)", claim(func(p *corev1.PersistentVolumeClaim) { p.Annotations[AnnotationAdoptedBy] = "new" }), true, ""},
		{"adopted by this server (the labels)", claim(func(p *corev1.PersistentVolumeClaim) {
			p.Labels[ogxv1beta1.AdoptedFromLabel], p.Labels["app.kubernetes.io/instance"] = "old", "new"
		}), true, ""},
		{"another OGXServer's own claim", claim(kept("OGXServer.ogx.io", "ns/old", true)), false, "OGXServer.ogx.io ns/old"},
		{"controlled by another old server", claim(controlledBy(legacy.GVK.GroupVersion().String(), legacy.GVK.Kind, "other")), false, legacy.GVK.GroupVersion().String() + "/" + legacy.GVK.Kind + " other"},
		{"kept for another old server", claim(kept(oldKind, "ns/other", true)), false, oldKind + " ns/other"},
		{"the old server's annotations without the operator's label", claim(kept(oldKind, "ns/old", false)), false, oldKind + " ns/old"},
		{"adopted by another server", claim(func(p *corev1.PersistentVolumeClaim) { p.Annotations[AnnotationAdoptedBy] = "thief" }), false, ""},
		{"hand-made", claim(func(*corev1.PersistentVolumeClaim) {}), false, ""},
	} {
		ok, whose := provenance(cr, c.pvc, "old")
		if ok != c.ok || whose != c.whose {
			t.Errorf("%s: %v %q, want %v %q", c.name, ok, whose, c.ok, c.whose)
		}
	}
}
