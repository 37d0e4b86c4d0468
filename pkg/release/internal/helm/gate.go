package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/operator-framework/helm-operator-plugins/pkg/manifestutil"
	sdkhandler "github.com/operator-framework/operator-lib/handler"
	"helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/switchover"
)

// gate is the last step between a rendered manifest and the cluster, run by
// Helm as a post-renderer on every install and upgrade. It parses the
// manifest once, as Helm's kube client does (what it builds is what Helm
// applies), checks every object against the chart's policy (namespace,
// declared kinds), refuses the whole manifest when an object of one of its
// names exists that the operator did not create, and sets the CR as each
// object's controller. A refusal fails the Helm action before anything is
// applied or recorded.
//
// The owner references are what helm-operator-plugins' default post-renderer
// sets, which the gate replaces: that one builds the manifest again and
// re-serialises it, and the gate then had to parse its output twice more to
// check what Helm would apply. Its output is the same, byte for byte.
type gate struct {
	cfg       *action.Configuration
	policy    guard.Policy
	ownership guard.Ownership
	// owner is the CR, of kind ownerKind.
	owner     client.Object
	ownerKind schema.GroupVersionKind
	// record checks the release record the manifest would be stored in; nil checks nothing.
	record func(manifest string) error
}

var _ postrender.PostRenderer = (*gate)(nil)

// NewGate is the operator's gate for an install or upgrade of owner's
// release (owner is of kind ownerKind); record checks the release record the
// manifest would be stored in (nil checks nothing).
func NewGate(cfg *action.Configuration, policy guard.Policy, ownership guard.Ownership, owner client.Object, ownerKind schema.GroupVersionKind, record func(manifest string) error) postrender.PostRenderer {
	return &gate{cfg: cfg, policy: policy, ownership: ownership, owner: owner, ownerKind: ownerKind, record: record}
}

// Run implements postrender.PostRenderer.
func (g *gate) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	infos, err := checkedInfos(g.cfg, in.String(), g.policy)
	if err != nil {
		return nil, err
	}
	lives, err := checkOwnership(infos, g.ownership)
	if err != nil {
		return nil, refused(infos, err)
	}
	if err := g.takeOver(lives); err != nil {
		return nil, refused(infos, err)
	}
	if err := g.releaseDeadOwners(lives); err != nil {
		return nil, err
	}
	out := &bytes.Buffer{}
	for _, info := range infos {
		u := info.Object.(*unstructured.Unstructured) // checkedInfos returns only these
		g.own(info, u)
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if g.record != nil {
		if err := g.record(out.String()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// releaseDeadOwners gives this CR the objects whose controller is an earlier
// CR of the same kind and name (a UID that is not this CR's): their owner
// references are replaced, the dead controller by this CR, with a JSON merge
// patch guarded by the object's resourceVersion. Helm's three-way strategic
// merge would otherwise add this CR's reference beside the dead one whenever
// the release it diffs against already names this CR (a reconcile between
// the records and the objects naming the dead CR), and the API server
// refuses two controllers: every upgrade failed, for good.
func (g *gate) releaseDeadOwners(lives []liveObject) error {
	for _, l := range lives {
		if l.existing == nil {
			continue
		}
		m, err := meta.Accessor(l.existing)
		if err != nil {
			continue
		}
		refs := m.GetOwnerReferences()
		dead := -1
		for i, r := range refs {
			gv, _ := schema.ParseGroupVersion(r.APIVersion)
			if r.Controller != nil && *r.Controller && r.Kind == g.ownerKind.Kind && gv.Group == g.ownerKind.Group &&
				r.Name == g.owner.GetName() && r.UID != g.owner.GetUID() {
				dead = i
			}
		}
		if dead < 0 {
			continue
		}
		next := append(append([]metav1.OwnerReference(nil), refs[:dead]...), refs[dead+1:]...)
		next = append(next, *metav1.NewControllerRef(g.owner, g.ownerKind))
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": next, "resourceVersion": m.GetResourceVersion()}})
		if err != nil {
			return err
		}
		if _, err := resource.NewHelper(l.info.Client, l.info.Mapping).Patch(l.info.Namespace, l.info.Name, types.MergePatchType, patch, &metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("take %s over from an earlier %s of its name: %w", l.ref(), g.ownerKind.Kind, err)
		}
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
// rolls out once, to what the chart renders; Helm, which then adopts the
// object into the release, finds nothing left to patch (issue 46: a Helm
// adoption alone left upstream's fields, which the next drift repair
// removed, a second rollout). Their UIDs, a Service's ClusterIP and a
// claim's volume stay (merged maps keep the fields the chart does not
// render). An object the chart keeps when the CR goes (helm.sh/resource-
// policy: keep: the claims, which hold data) trades the CR's controller
// reference for the owner annotations, as the operator's own such objects
// carry: deleting the CR must not delete the data.
func (g *gate) takeOver(lives []liveObject) error {
	for _, l := range lives {
		if !l.takeOver {
			continue
		}
		m, err := meta.Accessor(l.existing)
		if err != nil {
			return err
		}
		rendered, ok := l.info.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("take %s over: rendered as %T", l.ref(), l.info.Object)
		}
		u := rendered.DeepCopy()
		if err := markHelmOwned(u, g.ownership); err != nil {
			return err
		}
		u.SetResourceVersion(m.GetResourceVersion())
		switchover.ClearExclusive(u)
		if manifestutil.HasResourcePolicyKeep(u.GetAnnotations()) {
			// The owner annotations own() sets on kept objects, and the
			// existing references but the CR's (a merge patch replaces lists).
			g.own(l.info, u)
			refs := []any{}
			for _, r := range m.GetOwnerReferences() {
				if r.UID == g.owner.GetUID() {
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
		if _, err := resource.NewHelper(l.info.Client, l.info.Mapping).Patch(l.info.Namespace, l.info.Name, types.MergePatchType, patch, &metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("take %s over (the %s's own, made by another operator): %w", l.ref(), g.ownerKind.Kind, err)
		}
	}
	return nil
}

// own sets the CR as the controller of an object in its namespace, unless
// the chart keeps the object when the CR goes (helm.sh/resource-policy:
// keep), and marks anything else with operator-lib's owner annotations.
func (g *gate) own(info *resource.Info, u *unstructured.Unstructured) {
	if info.Namespaced() && u.GetNamespace() == g.owner.GetNamespace() && !manifestutil.HasResourcePolicyKeep(u.GetAnnotations()) {
		ref := metav1.NewControllerRef(g.owner, g.ownerKind)
		u.SetOwnerReferences(append(u.GetOwnerReferences(), *ref))
		return
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[sdkhandler.NamespacedNameAnnotation] = g.owner.GetNamespace() + "/" + g.owner.GetName()
	annotations[sdkhandler.TypeAnnotation] = g.ownerKind.GroupKind().String()
	u.SetAnnotations(annotations)
}

// checkedInfos builds a manifest's objects with Helm's kube client and checks
// them against the policy. A manifest the client cannot build is checked as
// text, so that what the policy refuses is reported as a violation rather
// than as the client's error.
func checkedInfos(cfg *action.Configuration, manifest string, policy guard.Policy) (helmkube.ResourceList, error) {
	infos, err := cfg.KubeClient.Build(bytes.NewBufferString(manifest), false)
	if err != nil {
		if _, verr := guard.Check(manifest, policy); verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	objs := make([]*unstructured.Unstructured, 0, len(infos))
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("read manifest: %s %s/%s was built as %T", info.Mapping.GroupVersionKind.Kind, info.Namespace, info.Name, info.Object)
		}
		objs = append(objs, u)
	}
	if _, err := guard.CheckObjects(objs, policy); err != nil {
		return nil, err
	}
	return infos, nil
}

// liveObject is an object of a manifest and its live state (nil when absent).
type liveObject struct {
	info     *resource.Info
	existing runtime.Object
	// takeOver: it exists, lacks the operator's marks and is the CR's own
	// by its controller reference (guard.Ownership.TakesOver).
	takeOver bool
}

func (l liveObject) ref() string {
	return l.info.Mapping.GroupVersionKind.Kind + " " + l.info.Namespace + "/" + l.info.Name
}

// readers is how many of a manifest's objects the gate reads at once.
const readers = 8

// checkOwnership reads every object of a manifest from the API server and
// returns them with their live state, or guard.Conflicts naming every one
// (in the manifest's order) that exists and is neither the operator's for
// this release and CR nor the CR's own to take over. The reads run side by
// side (readers at a time): one round trip's wait for a manifest of a few
// objects instead of one per object (issue 33).
func checkOwnership(infos helmkube.ResourceList, own guard.Ownership) ([]liveObject, error) {
	out := make([]liveObject, len(infos))
	errs := make([]error, len(infos))
	sem := make(chan struct{}, readers)
	var wg sync.WaitGroup
	for i, info := range infos {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = readOwned(info, own)
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
	if claim.info.Mapping.GroupVersionKind.Kind != "PersistentVolumeClaim" || claim.existing == nil {
		return false
	}
	if m, err := meta.Accessor(claim.existing); err != nil || metav1.GetControllerOfNoCopy(m) != nil {
		return false
	}
	for j, l := range out {
		kind := l.info.Mapping.GroupVersionKind.Kind
		if errs[j] != nil || l.existing == nil || (kind != "Deployment" && kind != "StatefulSet") {
			continue
		}
		m, err := meta.Accessor(l.existing)
		if err != nil || !l.takeOver && own.Check(l.ref(), m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences()) != nil {
			continue
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(l.existing)
		if err == nil && guard.MountsClaim(content, claim.info.Name) {
			return true
		}
	}
	return false
}

// readOwned is readLive with a conflict as its error, and the CR's own
// objects without the operator's marks marked to be taken over.
func readOwned(info *resource.Info, own guard.Ownership) (liveObject, error) {
	l, conflict, err := readLive(info, own)
	if err != nil {
		return l, err
	}
	if conflict == nil {
		// The operator's, but without Helm's label (switch-back gave it
		// to the upstream operator): Helm refuses to adopt it into an
		// install (the records went with the operator's namespace), so
		// its marks are set again first.
		if m, merr := meta.Accessor(l.existing); l.existing != nil && merr == nil && own.Release != "" && m.GetLabels()[guard.LabelHelmManagedBy] != "Helm" {
			l.takeOver = true
		}
		return l, nil
	}
	if m, merr := meta.Accessor(l.existing); merr == nil && own.TakesOver(m.GetOwnerReferences()) {
		l.takeOver = true
		return l, nil
	}
	return l, conflict
}

// readLive reads the live state of one object of a manifest (existing is nil
// when it does not exist) and checks that it is the operator's: conflict is
// the *guard.Conflict of an object that exists and is not.
func readLive(info *resource.Info, own guard.Ownership) (l liveObject, conflict, err error) {
	l = liveObject{info: info}
	existing, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	switch {
	case apierrors.IsNotFound(err):
		return l, nil, nil
	case err != nil:
		return l, nil, fmt.Errorf("read %s: %w", l.ref(), err)
	}
	l.existing = existing
	return l, l.owned(own), nil
}

// owned is nil when the object, which exists, is the operator's for this
// release and CR, and a *guard.Conflict when it is not.
func (l liveObject) owned(own guard.Ownership) error {
	m, err := meta.Accessor(l.existing)
	if err != nil {
		return own.Check(l.ref(), nil, nil, nil) // without metadata it is not the operator's
	}
	return own.Check(l.ref(), m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences())
}

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
func refused(infos helmkube.ResourceList, err error) error {
	var cs guard.Conflicts
	if !errors.As(err, &cs) && !apierrors.IsInvalid(err) {
		return err
	}
	r := &refusal{err: err}
	for _, info := range infos {
		r.rendered = append(r.rendered, info.Mapping.GroupVersionKind.Kind+"/"+info.Name)
	}
	return r
}

// AsUserError finds a problem the user fixes in err's chain (Helm wraps
// post-renderer errors): a guard violation or a name conflict, or an API
// server refusal of a rendered object (422), which is an invalid spec (the
// CR asks for an object Kubernetes does not accept). It returns nil for
// anything else, which is retried.
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
