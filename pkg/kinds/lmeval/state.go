package lmeval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Condition types and reasons of an LMEvalJob (this operator's; upstream's
// status has none).
const (
	// TypeValid is False while the spec or the operator settings keep the
	// job from running; the message names the field and the fix.
	TypeValid = "Valid"
	// TypePermitted is False when the job asked for what the administrator
	// denies; the job runs without it.
	TypePermitted = "Permitted"

	ReasonValid                   = "Valid"
	ReasonInvalidSpec             = "InvalidSpec"
	ReasonInvalidOperatorSettings = "InvalidOperatorSettings"
	ReasonPermitted               = "Permitted"
	ReasonPermitRefused           = "PermitRefused"
)

// Event reasons, upstream's where upstream has one.
const (
	EventPodCreation  = "PodCreation"
	EventPodMissing   = "PodMissing"
	EventJobCompleted = "JobCompleted"
	EventCancelled    = "Cancelled"
	EventSuspended    = "Suspended"
	EventResumed      = "Resumed"
	EventRerun        = "Rerun"
)

// AnnotationSpecHash on the pod is the hash of the spec it runs (suspend
// aside): a finished job whose spec changes runs again, as upstream re-runs
// it, but Kueue's suspend edits do not.
const AnnotationSpecHash = "ai-stack-operator.io/spec-hash"

// SpecHash hashes the spec but suspend.
func SpecHash(spec *lmv1alpha1.LMEvalJobSpec) string {
	s := *spec
	s.Suspend = false
	b, _ := json.Marshal(&s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// Pod is what the state machine sees of the job's pod.
type Pod struct {
	Phase    corev1.PodPhase
	SpecHash string
	// Deleting: the pod has a deletion timestamp.
	Deleting bool
	// Init and Main are the driver's and the main container's statuses.
	Init, Main *corev1.ContainerStatus
}

// ObservePod reads a pod (nil: none).
func ObservePod(p *corev1.Pod) *Pod {
	if p == nil {
		return nil
	}
	out := &Pod{Phase: p.Status.Phase, SpecHash: p.Annotations[AnnotationSpecHash], Deleting: p.DeletionTimestamp != nil}
	for i := range p.Status.InitContainerStatuses {
		if p.Status.InitContainerStatuses[i].Name == ContainerDriver {
			out.Init = &p.Status.InitContainerStatuses[i]
		}
	}
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == ContainerMain {
			out.Main = &p.Status.ContainerStatuses[i]
		}
	}
	return out
}

// Event is an event to record on the job.
type Event struct{ Type, Reason, Message string }

// Plan is what a reconcile does: create the job's objects, delete its pod,
// and write the status (when it differs).
type Plan struct {
	Create    bool
	DeletePod bool
	Status    lmv1alpha1.LMEvalJobStatus
	Events    []Event
}

// Input is what the state machine decides from.
type Input struct {
	Job *lmv1alpha1.LMEvalJob
	Pod *Pod
	// Invalid is a reason (InvalidSpec, InvalidOperatorSettings) and a
	// message when the job cannot run as it is; Permits are its permits.
	InvalidReason, InvalidMessage string
	Permits                       Permits
	// SuspendHonored: spec.suspend keeps the job without a pod (false for
	// a job labelled for Kueue: Kueue's, where Kueue is served; ignored as
	// upstream ignores it without its JOB_MGR service, where it is not).
	SuspendHonored bool
	// Queue: the job is queued for Kueue (nil: it is not, or the cluster
	// has no Kueue): it has no pod unless its Workload is admitted.
	Queue *Queue
	Now   time.Time
}

// fatalWaiting are the waiting reasons that never recover.
var fatalWaiting = map[string]bool{
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true,
	"ErrImageNeverPull": true, "ImagePullBackOff": true,
}

// Decide runs the job's state machine. Upstream's states and reasons:
// New -> Scheduled (pod made) -> Running -> Complete (Succeeded, Failed or
// Cancelled); Suspended while spec.suspend holds. A finished job's pod is
// never made again, unless the spec changes (a re-run).
func Decide(in Input) Plan {
	job := in.Job
	st := *job.Status.DeepCopy()
	plan := Plan{}
	ev := func(typ, reason, format string, args ...any) {
		plan.Events = append(plan.Events, Event{typ, reason, fmt.Sprintf(format, args...)})
	}
	now := metav1.NewTime(in.Now)
	hash := SpecHash(&job.Spec)
	setConditions(&st, in, job.Generation)

	complete := func(reason lmv1alpha1.Reason, msg string) {
		st.State, st.Reason, st.Message = lmv1alpha1.JobStateComplete, reason, msg
		if st.CompleteTime == nil {
			st.CompleteTime = &now
		}
		ev(corev1.EventTypeNormal, EventJobCompleted, "The LMEvalJob %s in namespace %s has completed", job.Name, job.Namespace)
	}

	// scheduled: the job's pod is made (or was, by a pass whose status
	// write was lost).
	scheduled := func() {
		resumed := st.State == lmv1alpha1.JobStateSuspended && st.LastScheduleTime != nil
		st.State, st.Reason, st.Message = lmv1alpha1.JobStateScheduled, lmv1alpha1.ReasonNone, "the pod is created"
		st.PodName, st.LastScheduleTime = NamesOf(job.Name).Pod, &now
		st.ProgressBars, st.Results, st.CompleteTime = nil, "", nil
		st.ObservedGeneration = job.Generation
		if resumed {
			ev(corev1.EventTypeNormal, EventResumed, "the LMEvalJob %s in namespace %s is resumed: a pod is created", job.Name, job.Namespace)
		} else {
			ev(corev1.EventTypeNormal, EventPodCreation, "the LMEvalJob %s in namespace %s created a pod", job.Name, job.Namespace)
		}
	}

	switch {
	case st.State == lmv1alpha1.JobStateComplete && in.Pod != nil && in.Pod.SpecHash != "" && in.Pod.SpecHash != hash && !in.Pod.Deleting:
		// The spec changed after the job finished: run it again. The
		// status says so first; the old pod goes in the next pass (the
		// case below), so that a status write that fails loses nothing:
		// the pod, still there, asks for the re-run again.
		st = lmv1alpha1.LMEvalJobStatus{State: lmv1alpha1.JobStateNew, Reason: lmv1alpha1.ReasonNone, Conditions: st.Conditions, ObservedGeneration: st.ObservedGeneration}
		ev(corev1.EventTypeNormal, EventRerun, "the spec of the LMEvalJob %s changed after it completed: it runs again", job.Name)

	case st.State == lmv1alpha1.JobStateNew && in.Pod != nil && !in.Pod.Deleting && in.Pod.SpecHash != hash:
		// A re-run's old pod: it goes before the new run is made. Its end
		// is the old spec's, never the new run's (a pass whose cache has
		// not seen its deletion yet must not take it for the new run's end:
		// the re-run would be lost, the job Complete again).
		plan.DeletePod = true

	case st.State == lmv1alpha1.JobStateComplete && st.CompleteTime != nil && !Live(in.Pod):
		// Finished: nothing to do. (A Complete status while the pod still
		// runs is not the operator's: see the default case.)

	case st.State == lmv1alpha1.JobStateCancelled:
		// A user's cancellation (upstream's: a write of status.state).
		plan.DeletePod = in.Pod != nil && !in.Pod.Deleting
		st.State, st.Reason = lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonCancelled
		if st.Message == "" {
			st.Message = "cancelled"
		}
		st.CompleteTime = &now
		ev(corev1.EventTypeNormal, EventCancelled, "The LMEvalJob %s in namespace %s has cancelled and changed its state to Complete", job.Name, job.Namespace)

	case job.Spec.Suspend && in.SuspendHonored:
		if in.Pod != nil && !in.Pod.Deleting && !terminated(in.Pod) {
			plan.DeletePod = true
		}
		if st.State != lmv1alpha1.JobStateSuspended {
			st.State = lmv1alpha1.JobStateSuspended
			ev(corev1.EventTypeNormal, EventSuspended, "the LMEvalJob %s is suspended: its pod is deleted until spec.suspend is false", job.Name)
		}

	case in.Queue != nil && !in.Queue.Admission.Running() && (in.Pod == nil || in.Pod.Deleting || !terminated(in.Pod)):
		// Not admitted (yet, or any more: evicted): no pod. A pod that ran
		// to its end is observed below instead.
		plan.DeletePod = in.Pod != nil && !in.Pod.Deleting
		if st.State != lmv1alpha1.JobStateSuspended {
			st.State = lmv1alpha1.JobStateSuspended
			if a := in.Queue.Admission; a != nil && a.Evicted {
				ev(corev1.EventTypeNormal, EventSuspended, "the LMEvalJob %s is suspended: Kueue evicted its Workload (%s: %s)", job.Name, a.EvictReason, a.EvictMsg)
			} else {
				ev(corev1.EventTypeNormal, EventSuspended, "the LMEvalJob %s waits for Kueue's admission in LocalQueue %s", job.Name, in.Queue.Name)
			}
		}

	case in.Pod == nil || in.Pod.Deleting:
		switch {
		case in.Pod != nil:
			// A pod on its way out (suspend, re-run): wait for it.
		case st.State == lmv1alpha1.JobStateScheduled || st.State == lmv1alpha1.JobStateRunning || st.State == lmv1alpha1.JobStateComplete:
			// Gone before the operator saw it end (a Complete without a
			// completeTime is not the operator's, which always stamps it):
			// how it ended is unknown.
			complete(lmv1alpha1.ReasonFailed, fmt.Sprintf("pods %q not found", NamesOf(job.Name).Pod))
			plan.Events = append([]Event{{corev1.EventTypeWarning, EventPodMissing, fmt.Sprintf("the pod for the LMEvalJob %s in namespace %s is gone", job.Name, job.Namespace)}}, plan.Events...)
		case in.InvalidReason == ReasonInvalidSpec:
			complete(lmv1alpha1.ReasonFailed, "Input validation failed: "+in.InvalidMessage)
		case in.InvalidReason != "":
			// The administrator's settings: wait for them, as New.
			st.State, st.Reason, st.Message = lmv1alpha1.JobStateNew, lmv1alpha1.ReasonNone, in.InvalidMessage
		default:
			plan.Create = true
			scheduled()
		}

	default:
		if st.State != lmv1alpha1.JobStateScheduled && st.State != lmv1alpha1.JobStateRunning && st.State != lmv1alpha1.JobStateComplete {
			// The job's pod of this spec exists and the status says none
			// does (New, Suspended): the pass that made it read a stale
			// job and its status write failed. The status says what runs,
			// else the job waits as Suspended beside its own pod.
			scheduled()
		}
		if st.State == lmv1alpha1.JobStateComplete {
			// Only the kubelet ends a run (the pod's phase and its
			// termination message), or the operator, which deletes a pod
			// whose job it ends. A Complete status while the pod runs was
			// written by someone else (the driver's token may patch the
			// status): the pod's state is the truth, so that the job keeps
			// its Kueue quota while its pod runs.
			st.State, st.Reason, st.CompleteTime = lmv1alpha1.JobStateRunning, lmv1alpha1.ReasonNone, nil
			st.Message = "the evaluation is running"
		}
		observeRunning(&st, in.Pod, complete)
		if st.State == lmv1alpha1.JobStateComplete && !terminated(in.Pod) {
			// Ended by the operator (a container that can never start):
			// the pod goes, so that nothing of the job runs or holds its
			// node's resources once its Workload is finished.
			plan.DeletePod = true
		}
	}
	plan.Status = st
	return plan
}

// Live says whether the job's pod may still run: it exists, is not being
// deleted and has not ended.
func Live(p *Pod) bool { return p != nil && !p.Deleting && !terminated(p) }

// QuotaReleasable says whether a job's Kueue Workload may be marked
// Finished (which hands its quota back): the job is Complete and its pod
// no longer runs (gone, or ended as the kubelet reports). Never while the
// pod runs, whatever the status says.
func QuotaReleasable(st *lmv1alpha1.LMEvalJobStatus, p *Pod) bool {
	return st.State == lmv1alpha1.JobStateComplete && st.CompleteTime != nil && (p == nil || terminated(p))
}

// observeRunning follows a pod that exists.
func observeRunning(st *lmv1alpha1.LMEvalJobStatus, p *Pod, complete func(lmv1alpha1.Reason, string)) {
	if w := waiting(p.Init); w != "" {
		complete(lmv1alpha1.ReasonFailed, "the driver container: "+w)
		return
	}
	if t := p.Init; t != nil && t.State.Terminated != nil && t.State.Terminated.ExitCode != 0 {
		complete(lmv1alpha1.ReasonFailed, fmt.Sprintf("the driver container exited with %d (%s)", t.State.Terminated.ExitCode, t.State.Terminated.Reason))
		return
	}
	if w := waiting(p.Main); w != "" {
		complete(lmv1alpha1.ReasonFailed, w)
		return
	}
	if terminated(p) {
		// The end is the kubelet's word: the driver's termination message,
		// else the pod's phase; never a state in the status, which the
		// driver's token may write (the results it reported stay).
		final := finalFrom(p.Main)
		switch {
		case final != nil:
			complete(final.Reason, final.Message)
		case p.Phase == corev1.PodSucceeded:
			complete(lmv1alpha1.ReasonSucceeded, "job completed")
		default:
			complete(lmv1alpha1.ReasonFailed, exitMessage(p.Main))
		}
		return
	}
	if p.Main != nil && p.Main.State.Running != nil && st.State != lmv1alpha1.JobStateRunning && st.State != lmv1alpha1.JobStateComplete {
		st.State, st.Reason = lmv1alpha1.JobStateRunning, lmv1alpha1.ReasonNone
		if st.Message == "" || st.Message == "the pod is created" {
			st.Message = "the evaluation is running"
		}
	}
}

// terminated: the pod ran to its end.
func terminated(p *Pod) bool {
	return p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed || (p.Main != nil && p.Main.State.Terminated != nil)
}

// waiting is the fatal waiting reason of a container, with its message.
func waiting(c *corev1.ContainerStatus) string {
	if c == nil || c.State.Waiting == nil || !fatalWaiting[c.State.Waiting.Reason] {
		return ""
	}
	if m := strings.TrimSpace(c.State.Waiting.Message); m != "" {
		return c.State.Waiting.Reason + ": " + m
	}
	return c.State.Waiting.Reason
}

// final is the driver's termination message.
type final struct {
	Reason  lmv1alpha1.Reason `json:"reason"`
	Message string            `json:"message"`
}

func finalFrom(c *corev1.ContainerStatus) *final {
	if c == nil || c.State.Terminated == nil {
		return nil
	}
	var f final
	if json.Unmarshal([]byte(c.State.Terminated.Message), &f) != nil || (f.Reason != lmv1alpha1.ReasonSucceeded && f.Reason != lmv1alpha1.ReasonFailed) {
		return nil
	}
	return &f
}

func exitMessage(c *corev1.ContainerStatus) string {
	if c == nil || c.State.Terminated == nil {
		return "the pod failed"
	}
	t := c.State.Terminated
	if t.Reason != "" && t.Reason != "Error" {
		return t.Reason
	}
	return fmt.Sprintf("exit status %d", t.ExitCode)
}

// setConditions sets Valid and Permitted.
func setConditions(st *lmv1alpha1.LMEvalJobStatus, in Input, gen int64) {
	valid := status.True(TypeValid, ReasonValid, "the spec and the operator settings are valid")
	if in.InvalidReason != "" {
		valid = status.False(TypeValid, in.InvalidReason, in.InvalidMessage)
	}
	valid.ObservedGeneration = gen
	meta.SetStatusCondition(&st.Conditions, valid)
	perm := status.True(TypePermitted, ReasonPermitted, "the job has every permit it asks for")
	if len(in.Permits.Refused) > 0 {
		perm = status.False(TypePermitted, ReasonPermitRefused, fmt.Sprintf("the operator's settings deny %s: the job runs without (%s set it to allow)", strings.Join(in.Permits.Refused, " and "), in.Permits.From))
	}
	perm.ObservedGeneration = gen
	meta.SetStatusCondition(&st.Conditions, perm)
	if in.Queue != nil {
		meta.SetStatusCondition(&st.Conditions, in.Queue.admittedCondition(gen))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypeAdmitted)
	}
}
