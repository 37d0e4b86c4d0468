package ogx

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/legacy"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
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
		if err != nil && strings.Contains(err.Error(), "no matches for kind") {
			return false, nil // the old kind is not served here
		}
		return got != nil, err
	}

	// Storage: the claim named by the annotation, or the one adopted before.
	if storageSrc != "" {
		pvc, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, legacy.ClaimName(storageSrc), &corev1.PersistentVolumeClaim{})
		if err != nil {
			return a, err
		}
		switch {
		case pvc == nil:
		case pvc.Labels[ogxv1beta1.AdoptedFromLabel] != "" && pvc.Labels["app.kubernetes.io/instance"] != cr.Name:
			problems = append(problems, fmt.Sprintf("claim %s was adopted by %s already", pvc.Name, pvc.Labels["app.kubernetes.io/instance"]))
		case metav1.GetControllerOfNoCopy(pvc) != nil && !legacy.ControlledBy(pvc, storageSrc):
			problems = append(problems, fmt.Sprintf("claim %s is controlled by %s, not by the old server %s: it is left alone", pvc.Name, legacy.Controller(pvc), storageSrc))
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
	switch {
	case a.Claim != "" && a.Waiting:
		a.Storage = &metav1.Condition{Type: ogxv1beta1.ConditionTypeStorageAdopted, Status: metav1.ConditionFalse, Reason: ReasonAdoptionWaiting,
			Message: fmt.Sprintf("claim %s is this server's (the old server no longer owns it, so deleting it keeps the data); the old server %s still runs on it: delete it and this server starts on the claim", a.Claim, storageSrc)}
		if a.releasing {
			a.Storage.Message = fmt.Sprintf("claim %s is being taken over from the old server %s; do not delete the old server until this condition says the claim is this server's", a.Claim, storageSrc)
		}
	case a.Claim != "":
		a.Storage = &metav1.Condition{Type: ogxv1beta1.ConditionTypeStorageAdopted, Status: metav1.ConditionTrue, Reason: ogxv1beta1.ReasonStorageAdopted, Message: fmt.Sprintf("PVC %s adopted", a.Claim)}
	}

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
			a.Networking = &metav1.Condition{Type: ogxv1beta1.ConditionTypeNetworkingAdopted, Status: metav1.ConditionTrue, Reason: ogxv1beta1.ReasonNetworkingAdopted, Message: fmt.Sprintf("Service %s selects this server's pods (networking adopted from %s)", name, networkSrc)}
		case exists:
			a.Networking = &metav1.Condition{Type: ogxv1beta1.ConditionTypeNetworkingAdopted, Status: metav1.ConditionFalse, Reason: ReasonAdoptionWaiting, Message: fmt.Sprintf("the old server %s still serves Service %s: delete it and the name selects this server's pods", networkSrc, name)}
		case legacy.ControlledBy(svc, networkSrc):
			// The old server is gone; the garbage collector deletes its Service.
			a.Networking = &metav1.Condition{Type: ogxv1beta1.ConditionTypeNetworkingAdopted, Status: metav1.ConditionFalse, Reason: ReasonAdoptionWaiting, Message: fmt.Sprintf("Service %s of the deleted server %s is being deleted", name, networkSrc)}
		default:
			problems = append(problems, fmt.Sprintf("Service %s exists and is not the old server's (%s): it is left alone", name, legacy.Controller(svc)))
		}
	}

	if storageSrc != "" || networkSrc != "" || len(problems) > 0 {
		a.Invalid = &metav1.Condition{Type: ogxv1beta1.ConditionTypeAdoptionConfigInvalid, Status: metav1.ConditionFalse, Reason: ogxv1beta1.ReasonAnnotationsValid, Message: "Adoption annotations are valid"}
		if len(problems) > 0 {
			a.Invalid = &metav1.Condition{Type: ogxv1beta1.ConditionTypeAdoptionConfigInvalid, Status: metav1.ConditionTrue, Reason: ogxv1beta1.ReasonAdoptionConfigInvalid, Message: strings.Join(problems, "; ")}
		}
	}
	return a, nil
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
