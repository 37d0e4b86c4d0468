package ogx

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/legacy"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Adoption, through upstream's annotations on an OGXServer:
// ogx.io/adopt-storage: <old> takes over the claim <old>-pvc of the server
// the OGXServer succeeds (data kept, the claim never re-created), and
// ogx.io/adopt-networking: <old> makes the Service name <old>-service
// select this server's pods, so that clients keep their URL.
//
// The claim is protected at once: when the old server is its controller
// (upstream's operator made it so), that reference is removed, so that
// deleting the old server does not delete the data. The claim is labelled
// ogx.io/adopted-from and app.kubernetes.io/instance (and annotated
// ogx.io/adopted-at), so that it stays this server's after the annotation
// is removed. While the old server exists it keeps the claim and its
// Service: this server's Deployment waits at zero replicas (a
// ReadWriteOnce claim mounted by two pods on two nodes would hang both)
// and StorageAdopted says so; once it is deleted, the pods start on the
// claim and the Service name is rendered for this server. Nothing is
// written to the old server or its Deployment.

// ReasonAdoptionWaiting: the old server still exists.
const ReasonAdoptionWaiting = "AdoptionWaiting"

// AnnotationAdoptedBy on a claim names the OGXServer that took it over from
// the old server: written when the operator removes the old server's
// controller reference (having checked it), it proves the claim is this
// server's while the old server's release still renders the claim's labels.
const AnnotationAdoptedBy = "ai-stack-operator.io/adopted-by"

// provenance says whether the claim is the old server's, as its own marks
// prove it: controlled by the old server (upstream's operator, or this
// one's before it kept the claim), kept by this operator's release of it,
// or already adopted by this server. Otherwise it says whose it is
// ("" with ok false: nobody's), for the refusal: a claim of another CR (an
// OGXServer's own <name>-pvc is named like an old server's) or a hand-made
// one is never taken.
func provenance(cr *ogxv1beta1.OGXServer, pvc *corev1.PersistentVolumeClaim, old string) (ok bool, whose string) {
	switch {
	case legacy.ControlledBy(pvc, old):
		return true, ""
	case pvc.Annotations[AnnotationAdoptedBy] == cr.Name:
		return true, ""
	case pvc.Labels[ogxv1beta1.AdoptedFromLabel] == old && pvc.Labels["app.kubernetes.io/instance"] == cr.Name:
		return true, ""
	case metav1.GetControllerOfNoCopy(pvc) != nil:
		return false, legacy.Controller(pvc)
	case legacy.KeptBy(pvc, cr.Namespace, old, release.LabelManaged):
		return true, ""
	case legacy.Keeper(pvc) != "":
		return false, legacy.Keeper(pvc)
	case pvc.Labels[release.LabelOwnerKind] != "":
		return false, pvc.Labels[release.LabelOwnerKind] + " " + pvc.Labels[release.LabelOwnerNamespace] + "/" + pvc.Labels["app.kubernetes.io/instance"]
	}
	return false, ""
}

// adoption is what Gather found of the adoption annotations.
type adoption struct {
	// Invalid is the AdoptionConfigInvalid condition when an annotation is
	// present; nil without annotations.
	Invalid *metav1.Condition
	// Claim is the adopted claim to mount ("" for none); Waiting is true
	// while the old server still exists (the Deployment waits at zero).
	Claim   string
	Waiting bool
	// Storage and Networking are the StorageAdopted and NetworkingAdopted
	// conditions; nil when nothing is to say.
	Storage, Networking *metav1.Condition
	// ServiceAlias is the old Service name to render for this server.
	ServiceAlias string
	// protect is the claim to update in Prepare (owner reference removed,
	// labels and annotation added); nil when it is as it should be.
	protect *corev1.PersistentVolumeClaim
	// releasing is true while the old server is still the claim's controller.
	releasing bool
}

// validSource checks an adoption annotation's value as upstream does.
func validSource(cr *ogxv1beta1.OGXServer, key, value string) string {
	switch {
	case value == cr.Name:
		return fmt.Sprintf("metadata.annotations[%s]: %q is this server's own name; name the old server, whose name must differ", key, value)
	case len(validation.IsDNS1123Label(value)) > 0:
		return fmt.Sprintf("metadata.annotations[%s]: %q is not a server name (%s)", key, value, strings.Join(validation.IsDNS1123Label(value), "; "))
	}
	return ""
}

// gatherAdoption reads what the adoption annotations need. Read-only: the
// claim's update is made in Prepare.
func (k *Kind) gatherAdoption(ctx context.Context, cr *ogxv1beta1.OGXServer, now time.Time) (adoption, error) {
	var a adoption
	storageSrc, networkSrc := cr.Annotations[ogxv1beta1.AdoptStorageAnnotation], cr.Annotations[ogxv1beta1.AdoptNetworkingAnnotation]
	var problems []string
	if storageSrc != "" {
		if p := validSource(cr, ogxv1beta1.AdoptStorageAnnotation, storageSrc); p != "" {
			problems, storageSrc = append(problems, p), ""
		}
	}
	if networkSrc != "" {
		if p := validSource(cr, ogxv1beta1.AdoptNetworkingAnnotation, networkSrc); p != "" {
			problems, networkSrc = append(problems, p), ""
		}
	}
	oldExists := func(name string) (bool, error) {
		old := &metav1.PartialObjectMetadata{}
		old.SetGroupVersionKind(legacy.GVK)
		got, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, name, old)
		if meta.IsNoMatchError(err) {
			return false, nil // the old kind (or its group version) is not served here
		}
		return got != nil, err
	}

	// Storage: the claim named by the annotation, or the one adopted before.
	if storageSrc != "" {
		pvc, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, legacy.ClaimName(storageSrc), &corev1.PersistentVolumeClaim{})
		if err != nil {
			return a, err
		}
		var proven bool
		var whose string
		if pvc != nil {
			proven, whose = provenance(cr, pvc, storageSrc)
		}
		switch {
		case pvc == nil:
		case pvc.Labels[ogxv1beta1.AdoptedFromLabel] != "" && pvc.Labels["app.kubernetes.io/instance"] != cr.Name:
			problems = append(problems, fmt.Sprintf("claim %s was adopted by %s already", pvc.Name, pvc.Labels["app.kubernetes.io/instance"]))
		case !proven:
			if whose == "" {
				problems = append(problems, fmt.Sprintf("claim %s carries no mark of the old server %s (no controller reference to %s %s, not kept by its release): the operator adopts only the old server's claim and leaves this one alone", pvc.Name, storageSrc, legacy.GVK.Kind, storageSrc))
			} else {
				problems = append(problems, fmt.Sprintf("claim %s is %s's, not the old server %s's: it is left alone", pvc.Name, whose, storageSrc))
			}
		default:
			a.Claim = pvc.Name
			exists, err := oldExists(storageSrc)
			if err != nil {
				return a, err
			}
			a.Waiting = exists
			p := pvc.DeepCopy()
			changed := false
			// At once: the old server is no longer the claim's controller, so
			// that deleting it keeps the data.
			if legacy.ControlledBy(p, storageSrc) {
				refs := p.OwnerReferences[:0]
				for _, r := range p.OwnerReferences {
					if r.Controller == nil || !*r.Controller {
						refs = append(refs, r)
					}
				}
				p.OwnerReferences, changed, a.releasing = refs, true, true
			}
			// The proof that it is this server's, once the old server's
			// reference is gone and before its labels are this server's.
			if p.Annotations[AnnotationAdoptedBy] != cr.Name {
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations[AnnotationAdoptedBy] = cr.Name
				changed = true
			}
			// Once the old server is gone (while it exists, its release
			// keeps the claim's labels as it rendered them): this server's.
			if !exists && (p.Labels[ogxv1beta1.AdoptedFromLabel] != storageSrc || p.Labels["app.kubernetes.io/instance"] != cr.Name) {
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels[ogxv1beta1.AdoptedFromLabel], p.Labels["app.kubernetes.io/instance"] = storageSrc, cr.Name
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				if p.Annotations[ogxv1beta1.AdoptedAtAnnotation] == "" {
					p.Annotations[ogxv1beta1.AdoptedAtAnnotation] = now.UTC().Format(time.RFC3339)
				}
				changed = true
			}
			if changed {
				a.protect = p
			}
		}
	}
	if a.Claim == "" {
		// Adopted before, the annotation since removed (or the claim renamed away).
		list := &corev1.PersistentVolumeClaimList{}
		if err := k.APIReader.List(ctx, list, client.InNamespace(cr.Namespace), client.HasLabels{ogxv1beta1.AdoptedFromLabel}, client.MatchingLabels{"app.kubernetes.io/instance": cr.Name}); err != nil {
			return a, err
		}
		switch len(list.Items) {
		case 0:
		case 1:
			a.Claim = list.Items[0].Name
		default:
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			problems = append(problems, fmt.Sprintf("claims %s all carry %s for this server; remove the label from all but one", strings.Join(names, ", "), ogxv1beta1.AdoptedFromLabel))
		}
	}
	// Never two servers on one claim: while a pod that is not this
	// server's mounts it (the old server's, still terminating; another's),
	// this server waits at zero replicas.
	var holder string
	if a.Claim != "" && !a.Waiting {
		h, err := k.otherPodMounting(ctx, cr, a.Claim)
		if err != nil {
			return a, err
		}
		holder, a.Waiting = h, h != ""
	}
	a.Storage = storageAdopted(a, storageSrc, holder)

	// Networking: the old Service name, for this server's pods.
	if networkSrc != "" {
		name := legacy.ServiceName(networkSrc)
		svc, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, name, &corev1.Service{})
		if err != nil {
			return a, err
		}
		exists, err := oldExists(networkSrc)
		if err != nil {
			return a, err
		}
		ours := svc != nil && svc.Labels[release.LabelManaged] == "true" && svc.Labels["app.kubernetes.io/instance"] == cr.Name
		switch {
		case ours || (svc == nil && !exists):
			a.ServiceAlias = name
			a.Networking = ptr.To(status.True(ogxv1beta1.ConditionTypeNetworkingAdopted, ogxv1beta1.ReasonNetworkingAdopted, fmt.Sprintf("Service %s selects this server's pods (networking adopted from %s)", name, networkSrc)))
		case exists:
			a.Networking = ptr.To(status.False(ogxv1beta1.ConditionTypeNetworkingAdopted, ReasonAdoptionWaiting, fmt.Sprintf("the old server %s still serves Service %s: delete it and the name selects this server's pods", networkSrc, name)))
		case legacy.ControlledBy(svc, networkSrc):
			// The old server is gone; the garbage collector deletes its Service.
			a.Networking = ptr.To(status.False(ogxv1beta1.ConditionTypeNetworkingAdopted, ReasonAdoptionWaiting, fmt.Sprintf("Service %s of the deleted server %s is being deleted", name, networkSrc)))
		default:
			problems = append(problems, fmt.Sprintf("Service %s exists and is not the old server's (%s): it is left alone", name, legacy.Controller(svc)))
		}
	}

	switch {
	case len(problems) > 0:
		a.Invalid = ptr.To(status.True(ogxv1beta1.ConditionTypeAdoptionConfigInvalid, ogxv1beta1.ReasonAdoptionConfigInvalid, strings.Join(problems, "; ")))
	case storageSrc != "" || networkSrc != "":
		a.Invalid = ptr.To(status.False(ogxv1beta1.ConditionTypeAdoptionConfigInvalid, ogxv1beta1.ReasonAnnotationsValid, "Adoption annotations are valid"))
	}
	return a, nil
}

// storageAdopted is StorageAdopted for the adopted claim (nil without one):
// False while a pod not this server's mounts it (holder) or the old server
// old still exists, True once this server runs on it.
func storageAdopted(a adoption, old, holder string) *metav1.Condition {
	const typ = ogxv1beta1.ConditionTypeStorageAdopted
	switch {
	case a.Claim == "":
		return nil
	case holder != "":
		return ptr.To(status.False(typ, ReasonAdoptionWaiting, fmt.Sprintf("claim %s is mounted by pod %s, which is not this server's: this server waits at zero replicas until no other pod mounts it (never two servers on one claim)", a.Claim, holder)))
	case a.Waiting && a.releasing:
		return ptr.To(status.False(typ, ReasonAdoptionWaiting, fmt.Sprintf("claim %s is being taken over from the old server %s; do not delete the old server until this condition says the claim is this server's", a.Claim, old)))
	case a.Waiting:
		return ptr.To(status.False(typ, ReasonAdoptionWaiting, fmt.Sprintf("claim %s is this server's (the old server no longer owns it, so deleting it keeps the data); the old server %s still runs on it: delete it and this server starts on the claim", a.Claim, old)))
	}
	return ptr.To(status.True(typ, ogxv1beta1.ReasonStorageAdopted, fmt.Sprintf("PVC %s adopted", a.Claim)))
}

// otherPodMounting names a pod of the CR's namespace, not this server's,
// that mounts the claim and has not ended ("" for none).
func (k *Kind) otherPodMounting(ctx context.Context, cr *ogxv1beta1.OGXServer, claim string) (string, error) {
	pods := &corev1.PodList{}
	if err := k.APIReader.List(ctx, pods, client.InNamespace(cr.Namespace)); err != nil {
		return "", fmt.Errorf("list the pods that may mount claim %s: %w", claim, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Labels["app"] == "ogx" && p.Labels["app.kubernetes.io/component"] == "server" && p.Labels["app.kubernetes.io/instance"] == naming.ChildName(cr.Name, "") {
			continue // this server's own (the chart's pod labels)
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				return p.Name, nil
			}
		}
	}
	return "", nil
}

// protectClaim writes the adopted claim's new owner references, labels and
// annotation (Prepare).
func (k *Kind) protectClaim(ctx context.Context, a adoption) error {
	if a.protect == nil {
		return nil
	}
	if err := k.Client.Update(ctx, a.protect); err != nil {
		return fmt.Errorf("adopt claim %s: %w", a.protect.Name, err)
	}
	return nil
}
