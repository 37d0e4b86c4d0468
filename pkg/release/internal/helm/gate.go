package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdkhandler "github.com/operator-framework/operator-lib/handler"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/switchover"
)

// Gate is the last step between a rendered manifest and the cluster, run on
// every install and upgrade. It parses the manifest once (what it builds is
// what is applied), checks every object against the chart's policy
// (namespace, declared kinds), refuses the whole manifest when an object of
// one of its names exists that the operator did not create, and sets the CR
// as each object's controller. A refusal fails the install or upgrade
// before anything is applied or recorded.
type Gate struct {
	Kube      *Kube
	Policy    guard.Policy
	Ownership guard.Ownership
	// Owner is the CR, of kind OwnerKind.
	Owner     client.Object
	OwnerKind schema.GroupVersionKind
	// Record checks the release record the manifest would be stored in; nil checks nothing.
	Record func(manifest string) error
}

// Gated is a manifest that passed the gate: the manifest to store, its
// objects as they are applied (the CR their controller), and each one's
// live state as the gate read it.
type Gated struct {
	Manifest string
	Objects  []liveObject
}

// Run checks a rendered manifest and returns what to apply and store.
func (g *Gate) Run(ctx context.Context, manifest string) (*Gated, error) {
	objs, err := checkedObjects(g.Kube, manifest, g.Policy)
	if err != nil {
		return nil, err
	}
	lives, err := checkOwnership(ctx, g.Kube, objs, g.Ownership)
	if err != nil {
		return nil, refused(objs, err)
	}
	if err := g.takeOver(ctx, lives); err != nil {
		return nil, refused(objs, err)
	}
	if err := g.releaseDeadOwners(ctx, lives); err != nil {
		return nil, err
	}
	var out strings.Builder
	for _, o := range objs {
		g.own(o)
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if g.Record != nil {
		if err := g.Record(out.String()); err != nil {
			return nil, err
		}
	}
	return &Gated{Manifest: out.String(), Objects: lives}, nil
}

// releaseDeadOwners gives this CR the objects whose controller is an earlier
// CR of the same kind and name (a UID that is not this CR's): their owner
// references are replaced, the dead controller by this CR, with a JSON merge
// patch guarded by the object's resourceVersion. A later apply would
// otherwise add this CR's reference beside the dead one, and the API
// server refuses two controllers: every upgrade failed, for good.
func (g *Gate) releaseDeadOwners(ctx context.Context, lives []liveObject) error {
	for i := range lives {
		l := &lives[i]
		if l.existing == nil {
			continue
		}
		refs := l.existing.GetOwnerReferences()
		dead := -1
		for i, r := range refs {
			gv, _ := schema.ParseGroupVersion(r.APIVersion)
			if r.Controller != nil && *r.Controller && r.Kind == g.OwnerKind.Kind && gv.Group == g.OwnerKind.Group &&
				r.Name == g.Owner.GetName() && r.UID != g.Owner.GetUID() {
				dead = i
			}
		}
		if dead < 0 {
			continue
		}
		next := append(append([]metav1.OwnerReference(nil), refs[:dead]...), refs[dead+1:]...)
		next = append(next, *metav1.NewControllerRef(g.Owner, g.OwnerKind))
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": next, "resourceVersion": l.existing.GetResourceVersion()}})
		if err != nil {
			return err
		}
		patched, err := g.Kube.MergePatch(ctx, l.obj, patch)
		if err != nil {
			return fmt.Errorf("take %s over from an earlier %s of its name: %w", l.obj.Ref(), g.OwnerKind.Kind, err)
		}
		l.existing = patched
	}
	return nil
}

// takeOver makes the objects that are the CR's own without the operator's
// marks (guard.Ownership.TakesOver: the upstream operator made them for
// this CR) the operator's in place, in one write each: a JSON merge patch
// of the rendered object with the operator's label and Helm's release marks,
// guarded by the object's resourceVersion. Maps merge and lists are
// replaced, so what upstream rendered and this chart does not (its own
// environment, probe timings) goes in the same write, and the Deployment
// rolls out once, to what the chart renders; the apply that follows finds
// nothing left to change (issue 46). Their UIDs, a Service's ClusterIP and
// a claim's volume stay (merged maps keep the fields the chart does not
// render). An object the chart keeps when the CR goes (helm.sh/resource-
// policy: keep: the claims, which hold data) trades the CR's controller
// reference for the owner annotations, as the operator's own such objects
// carry: deleting the CR must not delete the data.
func (g *Gate) takeOver(ctx context.Context, lives []liveObject) error {
	for i := range lives {
		l := &lives[i]
		if !l.takeOver {
			continue
		}
		u := l.obj.DeepCopy()
		markHelmOwned(u, g.Ownership)
		u.SetResourceVersion(l.existing.GetResourceVersion())
		switchover.ClearExclusive(u)
		if keep(u) {
			// The owner annotations own() sets on kept objects, and the
			// existing references but the CR's (a merge patch replaces lists).
			g.own(&Object{Unstructured: u, Mapping: l.obj.Mapping})
			refs := []any{}
			for _, r := range l.existing.GetOwnerReferences() {
				if r.UID == g.Owner.GetUID() {
					continue
				}
				ref, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r)
				if err != nil {
					return err
				}
				refs = append(refs, ref)
			}
			if err := unstructured.SetNestedSlice(u.Object, refs, "metadata", "ownerReferences"); err != nil {
				return err
			}
		}
		patch, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		patched, err := g.Kube.MergePatch(ctx, l.obj, patch)
		if err != nil {
			return fmt.Errorf("take %s over (the %s's own, made by another operator): %w", l.obj.Ref(), g.OwnerKind.Kind, err)
		}
		l.existing = patched
	}
	return nil
}

// keep says whether the chart keeps an object when its CR goes
// (helm.sh/resource-policy: keep).
func keep(u *unstructured.Unstructured) bool {
	return guard.Kept(u.GetAnnotations())
}

// own sets the CR as the controller of an object in its namespace, unless
// the chart keeps the object when the CR goes (helm.sh/resource-policy:
// keep), and marks anything else with operator-lib's owner annotations.
func (g *Gate) own(o *Object) {
	u := o.Unstructured
	if o.Namespaced() && u.GetNamespace() == g.Owner.GetNamespace() && !keep(u) {
		ref := metav1.NewControllerRef(g.Owner, g.OwnerKind)
		u.SetOwnerReferences(append(u.GetOwnerReferences(), *ref))
		return
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[sdkhandler.NamespacedNameAnnotation] = g.Owner.GetNamespace() + "/" + g.Owner.GetName()
	annotations[sdkhandler.TypeAnnotation] = g.OwnerKind.GroupKind().String()
	u.SetAnnotations(annotations)
}

// checkedObjects builds a manifest's objects and checks them against the
// policy. A manifest that cannot be built is checked as text, so that what
// the policy refuses is reported as a violation rather than as a build
// error.
func checkedObjects(k *Kube, manifest string, policy guard.Policy) ([]*Object, error) {
	objs, err := k.Build(manifest)
	if err != nil {
		if _, verr := guard.Check(manifest, policy); verr != nil {
			return nil, verr
		}
		return nil, err
	}
	us := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		us = append(us, o.Unstructured)
	}
	if _, err := guard.CheckObjects(us, policy); err != nil {
		return nil, err
	}
	return objs, nil
}

// liveObject is an object of a manifest and its live state (nil when absent).
type liveObject struct {
	obj      *Object
	existing *unstructured.Unstructured
	// takeOver: it exists, lacks the operator's marks and is the CR's own
	// by its controller reference (guard.Ownership.TakesOver).
	takeOver bool
}

// readers is how many of a manifest's objects the gate reads at once.
const readers = 8

// checkOwnership reads every object of a manifest from the API server and
// returns them with their live state, or guard.Conflicts naming every one
// (in the manifest's order) that exists and is neither the operator's for
// this release and CR nor the CR's own to take over. The reads run side by
// side (readers at a time): one round trip's wait for a manifest of a few
// objects instead of one per object (issue 33).
func checkOwnership(ctx context.Context, k *Kube, objs []*Object, own guard.Ownership) ([]liveObject, error) {
	out := make([]liveObject, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, readers)
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = readOwned(ctx, k, o, own)
		}()
	}
	wg.Wait()
	var conflicts guard.Conflicts
	for i, err := range errs {
		var c *guard.Conflict
		switch {
		case errors.As(err, &c) && mountedByOwnWorkload(out, errs, i, own):
			out[i].takeOver = true
		case errors.As(err, &c):
			conflicts = append(conflicts, c)
		case err != nil:
			return nil, err
		}
	}
	if len(conflicts) > 0 {
		return nil, conflicts
	}
	return out, nil
}

// mountedByOwnWorkload says whether out[i] is a claim without a controller
// that a workload of the manifest mounts, which is the CR's own (taken over
// or the operator's) and exists: the CR's data, made by an operator that
// gives claims no owner reference (guard.MountsClaim).
func mountedByOwnWorkload(out []liveObject, errs []error, i int, own guard.Ownership) bool {
	claim := out[i]
	if claim.obj.Mapping.GroupVersionKind.Kind != "PersistentVolumeClaim" || claim.existing == nil {
		return false
	}
	if metav1.GetControllerOfNoCopy(claim.existing) != nil {
		return false
	}
	for j, l := range out {
		kind := l.obj.Mapping.GroupVersionKind.Kind
		if errs[j] != nil || l.existing == nil || (kind != "Deployment" && kind != "StatefulSet") {
			continue
		}
		m := l.existing
		if !l.takeOver && own.Check(l.obj.Ref(), m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences()) != nil {
			continue
		}
		if guard.MountsClaim(m.Object, claim.obj.GetName()) {
			return true
		}
	}
	return false
}

// readOwned is readLive with a conflict as its error, and the CR's own
// objects without the operator's marks marked to be taken over.
func readOwned(ctx context.Context, k *Kube, o *Object, own guard.Ownership) (liveObject, error) {
	l, conflict, err := readLive(ctx, k, o, own)
	if err != nil {
		return l, err
	}
	if conflict == nil {
		// The operator's, but without Helm's label (switch-back gave it
		// to the upstream operator): its marks are set again first.
		if l.existing != nil && own.Release != "" && l.existing.GetLabels()[guard.LabelHelmManagedBy] != "Helm" {
			l.takeOver = true
		}
		return l, nil
	}
	if own.TakesOver(l.existing.GetOwnerReferences()) {
		l.takeOver = true
		return l, nil
	}
	return l, conflict
}

// readLive reads the live state of one object of a manifest (existing is nil
// when it does not exist) and checks that it is the operator's: conflict is
// the *guard.Conflict of an object that exists and is not.
func readLive(ctx context.Context, k *Kube, o *Object, own guard.Ownership) (l liveObject, conflict, err error) {
	l = liveObject{obj: o}
	existing, err := k.Get(ctx, o)
	switch {
	case err != nil:
		return l, nil, fmt.Errorf("read %s: %w", o.Ref(), err)
	case existing == nil:
		return l, nil, nil
	}
	l.existing = existing
	return l, owned(o, existing, own), nil
}

// owned is nil when the object, which exists, is the operator's for this
// release and CR, and a *guard.Conflict when it is not.
// refusal is a manifest refused because objects are in its way, or whose
// takeover the API server refused, with the objects it renders.
type refusal struct {
	rendered []string
	err      error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refused wraps a conflict, or a takeover the API server refused, with the
// names of the manifest's objects; any other error is returned as it is.
func refused(objs []*Object, err error) error {
	var cs guard.Conflicts
	if !errors.As(err, &cs) && !apierrors.IsInvalid(err) {
		return err
	}
	r := &refusal{err: err}
	for _, o := range objs {
		r.rendered = append(r.rendered, o.Mapping.GroupVersionKind.Kind+"/"+o.GetName())
	}
	return r
}

// AsUserError finds a problem the user fixes in err's chain: a guard
// violation or a name conflict, or an API server refusal of a rendered
// object (422), which is an invalid spec (the CR asks for an object
// Kubernetes does not accept). It returns nil for anything else, which is
// retried.
func AsUserError(err error) *status.Failure {
	f := asUserError(err)
	var r *refusal
	if f != nil && errors.As(err, &r) {
		f.Rendered = r.rendered
	}
	return f
}

func asUserError(err error) *status.Failure {
	var v *guard.Violation
	if errors.As(err, &v) {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: v.Error()}
	}
	var cs guard.Conflicts
	if errors.As(err, &cs) {
		return &status.Failure{Reason: status.ReasonNameConflict, Message: cs.Error()}
	}
	var c *guard.Conflict
	if errors.As(err, &c) {
		return &status.Failure{Reason: status.ReasonNameConflict, Message: c.Error()}
	}
	var f *status.Failure
	if errors.As(err, &f) {
		return f
	}
	if apierrors.IsInvalid(err) {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: "the API server refused an object rendered from the spec: " + err.Error()}
	}
	return nil
}
