// Package switchover says what the operator will do with the objects
// another operator (the upstream operator of the kind) left for a CR,
// before the switch: which it
// takes over in place, which roll its pods and why, which stay in the way
// and what to do, and what becomes of every claim. It is the logic of
// `manager preflight` (docs/switching.md): pure, over the rendered and the
// live objects; the command reads the cluster.
package switchover

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// Action is what the operator will do with one object at the switch.
type Action string

const (
	// Create: nothing of the name exists; the operator creates it.
	Create Action = "create"
	// Ours: the operator's already (an earlier switch, or its own install).
	Ours Action = "ours"
	// TakeOver: the CR's own (its controller reference is the CR, by UID),
	// made by the other operator: taken over in place, same UID.
	TakeOver Action = "take over"
	// InTheWay: an object of the name that is not the CR's; the CR stays
	// NameConflict until it is renamed or moved.
	InTheWay Action = "in the way"
	// Left: the CR controls it but the operator does not render it; it is
	// left as it is (deleted with the CR by the garbage collector, a claim
	// never).
	Left Action = "left"
)

// Object is one object of a CR at the switch.
type Object struct {
	Kind, Name string
	Action     Action
	// Rollout are the fields of a taken-over workload's pod template that
	// the takeover changes (each change rolls the pods once, all in one
	// rollout); empty: its pods stay.
	Rollout []string
	// Note says what happens to it, or what to do.
	Note string
}

// CR is the preflight of one custom resource.
type CR struct {
	Kind, Namespace, Name string
	Objects               []Object
	// Finalizers are the CR's finalizers of other controllers (the upstream
	// operator's): nothing removes them once that operator is gone.
	Finalizers []string
	// Problem is why the CR was not looked at (a spec the operator refuses,
	// which its status will say; a CR being deleted); empty when it was.
	Problem string
}

// Classify says what the operator does with an object of a name it renders
// for the CR: live is the object as it exists (nil: none), own the CR's
// ownership (guard.Ownership with the CR's UID). The note of an object in
// the way is what to do, never to delete a claim.
func Classify(own guard.Ownership, kind string, live *unstructured.Unstructured) (Action, string) {
	if live == nil {
		return Create, "created"
	}
	ref := kind + " " + live.GetNamespace() + "/" + live.GetName()
	err := own.Check(ref, live.GetLabels(), live.GetAnnotations(), live.GetOwnerReferences())
	switch {
	case err == nil:
		return Ours, "already the operator's"
	case own.TakesOver(live.GetOwnerReferences()):
		return TakeOver, takeOverNote(kind, live)
	default:
		return InTheWay, err.Error()
	}
}

// takeOverNote is what the takeover keeps of an object.
func takeOverNote(kind string, live *unstructured.Unstructured) string {
	switch kind {
	case "PersistentVolumeClaim":
		vol, _, _ := unstructured.NestedString(live.Object, "spec", "volumeName")
		if vol == "" {
			vol = "none bound yet"
		}
		return "kept: same claim, same volume (" + vol + "), never deleted or re-created; the CR's controller reference gives way to owner annotations, so that deleting the CR keeps the data"
	case "Service":
		ip, _, _ := unstructured.NestedString(live.Object, "spec", "clusterIP")
		return "kept: same Service, same ClusterIP (" + ip + ")"
	}
	return "kept: same object, what the operator renders merged in"
}

// LeftNote is what becomes of an object the CR controls that the operator
// does not render.
func LeftNote(kind string) string {
	if kind == "PersistentVolumeClaim" {
		return "left as it is, never deleted: the operator does not render a claim of this name"
	}
	return "left as it is (still controlled by the CR, deleted with it): the operator does not render it; delete it by hand if it is not wanted"
}

// podTemplateKinds are the kinds whose pod template change replaces pods.
var podTemplateKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// RollsOut says whether a change of the kind's pod template replaces pods.
func RollsOut(kind string) bool { return podTemplateKinds[kind] }

// TemplateChanges are the fields of spec.template that differ between a
// workload as it is (before) and as the takeover leaves it (after, the API
// server's answer to a dry run of the takeover), sorted; nil when equal.
func TemplateChanges(before, after *unstructured.Unstructured) []string {
	b, _, _ := unstructured.NestedFieldNoCopy(before.Object, "spec", "template")
	a, _, _ := unstructured.NestedFieldNoCopy(after.Object, "spec", "template")
	var out []string
	diff("spec.template", b, a, &out)
	sort.Strings(out)
	return out
}

// diff appends the paths under path where a and b differ: the deepest map
// key that differs, a list as a whole (its elements are named by index when
// the lengths agree).
func diff(path string, b, a any, out *[]string) {
	if reflect.DeepEqual(a, b) {
		return
	}
	bm, bok := b.(map[string]any)
	am, aok := a.(map[string]any)
	if bok && aok {
		keys := map[string]bool{}
		for k := range bm {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		for k := range keys {
			diff(path+"."+k, bm[k], am[k], out)
		}
		return
	}
	bl, bok := b.([]any)
	al, aok := a.([]any)
	if bok && aok && len(bl) == len(al) {
		for i := range bl {
			diff(fmt.Sprintf("%s[%d]", path, i), bl[i], al[i], out)
		}
		return
	}
	*out = append(*out, path)
}

// maxFields is how many changed fields a line names.
const maxFields = 8

// Write prints the preflight: per CR, each object with what happens to it,
// then a summary of what the switch does to the CR.
func Write(w io.Writer, crs []CR) error {
	var b strings.Builder
	if len(crs) == 0 {
		b.WriteString("no custom resource of the kinds this operator serves: nothing to switch\n")
	}
	for _, cr := range crs {
		fmt.Fprintf(&b, "%s %s/%s\n", cr.Kind, cr.Namespace, cr.Name)
		if cr.Problem != "" {
			fmt.Fprintf(&b, "  not looked at: %s\n", cr.Problem)
			continue
		}
		inTheWay, rollouts := 0, 0
		for _, o := range cr.Objects {
			fmt.Fprintf(&b, "  %-11s %s %s: %s\n", o.Action, o.Kind, o.Name, o.Note)
			switch {
			case o.Action == InTheWay:
				inTheWay++
			case RollsOut(o.Kind) && o.Action == TakeOver && len(o.Rollout) > 0:
				rollouts++
				fields := o.Rollout
				more := ""
				if len(fields) > maxFields {
					fields, more = fields[:maxFields], fmt.Sprintf(" and %d more", len(o.Rollout)-maxFields)
				}
				fmt.Fprintf(&b, "              rolls out once: the pod template differs in %s%s\n", strings.Join(fields, ", "), more)
			case RollsOut(o.Kind) && o.Action == TakeOver:
				fmt.Fprintf(&b, "              no rollout: the pod template is the same\n")
			}
		}
		for _, f := range cr.Finalizers {
			fmt.Fprintf(&b, "  finalizer   %s stays on the CR: once its operator is stopped nothing removes it, and deleting the CR would wait for ever; remove it then (docs/switching.md)\n", f)
		}
		switch {
		case inTheWay > 0:
			fmt.Fprintf(&b, "  after the switch: Reconciled=False NameConflict naming the %d object(s) in the way; nothing is changed until they are moved, and the status reads what runs\n", inTheWay)
		default:
			fmt.Fprintf(&b, "  after the switch: reconciled, %d rollout(s)\n", rollouts)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TakeOverMountedClaims makes a claim in the way a takeover, as the gate
// does, when it has no controller and a workload of the CR (taken over, or
// the operator's) mounts it (guard.MountsClaim): an upstream operator that
// gives its claims no owner reference made it for the CR. lives[i] is the
// live object of objs[i] (nil when absent).
func TakeOverMountedClaims(objs []Object, lives []*unstructured.Unstructured) {
	for i, o := range objs {
		if o.Kind != "PersistentVolumeClaim" || o.Action != InTheWay || lives[i] == nil || hasController(lives[i]) {
			continue
		}
		for j, w := range objs {
			if RollsOut(w.Kind) && (w.Action == TakeOver || w.Action == Ours) && lives[j] != nil && guard.MountsClaim(lives[j].Object, o.Name) {
				objs[i].Action, objs[i].Note = TakeOver, takeOverNote(o.Kind, lives[i])+" (it has no owner reference; the CR's "+w.Kind+" "+w.Name+" mounts it)"
				break
			}
		}
	}
}

func hasController(u *unstructured.Unstructured) bool {
	for _, r := range u.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

// ClearExclusive prepares the takeover's merge patch of a rendered object:
// a merge patch keeps every live field the patch does not name, so a field
// that the rendered object's choice excludes is named, as null, to be
// removed: a Deployment rendered with the Recreate strategy drops the live
// rollingUpdate parameters (trustyai-service-operator's RollingUpdate
// Deployment taken over by a chart that mounts a ReadWriteOnce claim), which
// the API server refuses beside Recreate.
func ClearExclusive(u *unstructured.Unstructured) {
	if u.GetKind() != "Deployment" {
		return
	}
	if t, _, _ := unstructured.NestedString(u.Object, "spec", "strategy", "type"); t == "Recreate" {
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "strategy", "rollingUpdate"); !found {
			_ = unstructured.SetNestedField(u.Object, nil, "spec", "strategy", "rollingUpdate")
		}
	}
}

// JobInFlight says why an evaluation job in the state (an LMEvalJob's
// status.state) is not handed over as it runs: "" for one that has ended
// (Complete) or not begun under the upstream operator (New, no state).
func JobInFlight(state string) string {
	switch state {
	case "", "New", "Complete":
		return ""
	}
	return "the job is " + state + " under the upstream operator, whose pod runs its driver and reports to it: let it end before the switch (kubectl get lmevaljobs -A shows the states), or cancel it and create it again after the switch"
}
