package status

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The skeleton every Helm kind's status shares: what a reconcile observed
// whatever the kind, conditions set through one setter bound to the
// generation and time, Reconciled from the Failure and Ready from the Failure
// and the kind's gates. A kind's computeStatus is its own setters around it.

// Observed is what every kind's status derives from, whatever the kind; each
// kind's observed struct embeds it.
type Observed struct {
	// Generation is the CR's generation the status is computed for.
	Generation int64
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *Failure
	// Applied is true once a release of the chart exists.
	Applied bool
	// Deleting is true while the CR's deletion waits for the uninstall.
	Deleting bool
	// Now stamps condition transitions.
	Now metav1.Time
}

// Conditions sets the conditions of one list, each stamped with the
// generation it was computed for; a condition keeps its lastTransitionTime
// unless its status changes.
type Conditions struct {
	list       *[]metav1.Condition
	generation int64
	now        metav1.Time
}

// On binds a setter to a list of conditions.
func (o Observed) On(list *[]metav1.Condition) Conditions {
	return Conditions{list: list, generation: o.Generation, now: o.Now}
}

// Set sets c and returns it as given, for the gates of Ready.
func (s Conditions) Set(c metav1.Condition) metav1.Condition {
	Set(s.list, c, s.generation, s.now)
	return c
}

// Remove removes the condition of type t: it no longer applies.
func (s Conditions) Remove(t string) {
	meta.RemoveStatusCondition(s.list, t)
}

// Keep restamps the condition of type t as it stands, or sets c when there
// is none: for a probe whose answer is on its way.
func (s Conditions) Keep(t string, c metav1.Condition) {
	if prev := meta.FindStatusCondition(*s.list, t); prev != nil {
		c = *prev
	}
	s.Set(c)
}

// True is a condition of type t with status True.
func True(t, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

// False is a condition of type t with status False.
func False(t, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

// Unknown is a condition of type t with status Unknown.
func Unknown(t, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: msg}
}

// ReasonReleaseApplied is the reason of Reconciled (or a kind's condition in
// its place) when the chart is applied for the current spec.
const ReasonReleaseApplied = "ReleaseApplied"

// AppliedAs is a condition of type t that says whether the chart is applied
// for the current spec: True, or False with the failure's reason and
// message. Reconciled is one; TrustyAIService's ProvisioningSucceeded is
// another.
func (o Observed) AppliedAs(t string) metav1.Condition {
	if o.Failure != nil {
		return False(t, o.Failure.Reason, o.Failure.Error())
	}
	return True(t, ReasonReleaseApplied, "the chart is applied for the current spec")
}

// Reconciled is the Reconciled condition.
func (o Observed) Reconciled() metav1.Condition {
	return o.AppliedAs(TypeReconciled)
}

// notApplied is Ready while the current spec is not applied.
func (o Observed) notApplied() metav1.Condition {
	return False(TypeReady, o.Failure.Reason, "the current spec is not applied: "+o.Failure.Error())
}

// Ready is the Ready condition whose gates are checked in order: False with
// the failure while the current spec is not applied, else False with the
// reason and message of the first gate that is not True, else True with
// reason and msg.
func (o Observed) Ready(reason, msg string, gates ...metav1.Condition) metav1.Condition {
	if o.Failure != nil {
		return o.notApplied()
	}
	for _, g := range gates {
		if g.Status != metav1.ConditionTrue {
			return False(TypeReady, g.Reason, g.Message)
		}
	}
	return True(TypeReady, reason, msg)
}

// ReasonComponentsNotReady is Ready's reason when ReadyAll finds gates that
// are not True.
const ReasonComponentsNotReady = "ComponentsNotReady"

// ReadyAll is the Ready condition that names every gate not True: False with
// the failure while the current spec is not applied, else False, reason
// ComponentsNotReady, listing each such gate's type and message, else True
// with reason and msg.
func (o Observed) ReadyAll(reason, msg string, gates ...metav1.Condition) metav1.Condition {
	if o.Failure != nil {
		return o.notApplied()
	}
	var parts []string
	for _, g := range gates {
		if g.Status != metav1.ConditionTrue {
			parts = append(parts, g.Type+": "+g.Message)
		}
	}
	if len(parts) > 0 {
		return False(TypeReady, ReasonComponentsNotReady, strings.Join(parts, "; "))
	}
	return True(TypeReady, reason, msg)
}

// Stage is where a CR stands, for a kind's phase: each kind names the
// stages in its own API's words (a table from Stage to its phase).
type Stage int

// The stages, in the order Stage decides them.
const (
	// StageTerminating: the CR is being deleted.
	StageTerminating Stage = iota
	// StageFailed: the current spec is not applied (a Failure).
	StageFailed
	// StageReady: Ready is True.
	StageReady
	// StageInitializing: the chart is applied and the workload is not ready yet.
	StageInitializing
	// StagePending: nothing is applied yet.
	StagePending
)

// Stage is where the CR stands given its Ready condition: terminating,
// failed, ready, initializing once the chart is applied, else pending.
func (o Observed) Stage(ready metav1.Condition) Stage {
	switch {
	case o.Deleting:
		return StageTerminating
	case o.Failure != nil:
		return StageFailed
	case ready.Status == metav1.ConditionTrue:
		return StageReady
	case o.Applied:
		return StageInitializing
	}
	return StagePending
}
