package lmeval

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

var t0 = time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)

func job(state lmv1alpha1.JobState) *lmv1alpha1.LMEvalJob {
	j := &lmv1alpha1.LMEvalJob{
		ObjectMeta: metav1.ObjectMeta{Name: "eval", Namespace: "team-a", Generation: 1},
		Spec:       lmv1alpha1.LMEvalJobSpec{Model: "hf", TaskList: lmv1alpha1.TaskList{TaskNames: []string{"arc_easy"}}},
	}
	j.Status.State = state
	if state != "" && state != lmv1alpha1.JobStateNew {
		ts := metav1.NewTime(t0.Add(-time.Minute))
		j.Status.LastScheduleTime, j.Status.PodName = &ts, "eval"
	}
	return j
}

func pod(j *lmv1alpha1.LMEvalJob, phase corev1.PodPhase, main *corev1.ContainerState) *Pod {
	p := &Pod{Phase: phase, SpecHash: SpecHash(&j.Spec)}
	if main != nil {
		p.Main = &corev1.ContainerStatus{Name: ContainerMain, State: *main}
	}
	return p
}

func eventReasons(p Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Reason)
	}
	return out
}

func TestStateMachine(t *testing.T) {
	running := &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	exited := func(code int32, reason, msg string) *corev1.ContainerState {
		return &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg}}
	}
	for _, c := range []struct {
		name          string
		job           *lmv1alpha1.LMEvalJob
		pod           func(*lmv1alpha1.LMEvalJob) *Pod
		invalid, msg  string
		suspendHonor  bool
		create, del   bool
		state         lmv1alpha1.JobState
		reason        lmv1alpha1.Reason
		message       string
		events        []string
		completeTimed bool
	}{
		{name: "new job gets its pod", job: job(""), create: true, state: lmv1alpha1.JobStateScheduled, reason: lmv1alpha1.ReasonNone, message: "the pod is created", events: []string{EventPodCreation}},
		{name: "pending pod stays Scheduled", job: job(lmv1alpha1.JobStateScheduled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodPending, nil) }, state: lmv1alpha1.JobStateScheduled},
		{name: "running main container is Running", job: job(lmv1alpha1.JobStateScheduled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodRunning, running) }, state: lmv1alpha1.JobStateRunning, reason: lmv1alpha1.ReasonNone, message: "the evaluation is running"},
		{name: "the pod's end, the driver's results kept", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			j.Status.Reason, j.Status.Message, j.Status.Results = lmv1alpha1.ReasonSucceeded, "job completed", `{"results":{}}`
			return j
		}(), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodSucceeded, exited(0, "Completed", "")) }, state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonSucceeded, message: "job completed", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "a Complete status while the pod runs is no end: the pod's state is", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			j.Status.Reason, j.Status.Message = lmv1alpha1.ReasonSucceeded, "job completed"
			return j
		}(), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodRunning, running) }, state: lmv1alpha1.JobStateRunning, reason: lmv1alpha1.ReasonNone, message: "the evaluation is running"},
		{name: "a forged end with a completeTime while the pod runs: Running, the pod kept", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			ts := metav1.NewTime(t0.Add(-time.Second))
			j.Status.Reason, j.Status.Message, j.Status.CompleteTime = lmv1alpha1.ReasonSucceeded, "job completed", &ts
			return j
		}(), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodRunning, running) }, state: lmv1alpha1.JobStateRunning, reason: lmv1alpha1.ReasonNone, message: "the evaluation is running"},
		{name: "a forged end that names the reason is not taken when the pod ends otherwise", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			j.Status.Reason, j.Status.Message = lmv1alpha1.ReasonSucceeded, "job completed"
			return j
		}(), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodFailed, exited(137, "OOMKilled", "")) },
			state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: "OOMKilled", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "termination message when the status was not patched", job: job(lmv1alpha1.JobStateRunning), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			return pod(j, corev1.PodFailed, exited(1, "Error", `{"state":"Complete","reason":"Failed","message":"exit status 3"}`))
		}, state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: "exit status 3", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "killed without a message", job: job(lmv1alpha1.JobStateRunning), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodFailed, exited(137, "OOMKilled", "")) },
			state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: "OOMKilled", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "succeeded without a message", job: job(lmv1alpha1.JobStateRunning), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodSucceeded, exited(0, "Completed", "")) },
			state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonSucceeded, message: "job completed", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "bad image fails", job: job(lmv1alpha1.JobStateScheduled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			return pod(j, corev1.PodPending, &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "no such image"}})
		}, del: true, state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: "ImagePullBackOff: no such image", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "ContainerCreating is no failure (upstream's bug)", job: job(lmv1alpha1.JobStateScheduled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			return pod(j, corev1.PodPending, &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}})
		}, state: lmv1alpha1.JobStateScheduled},
		{name: "driver init container failing is seen (upstream misses it)", job: job(lmv1alpha1.JobStateScheduled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			p := pod(j, corev1.PodPending, nil)
			p.Init = &corev1.ContainerStatus{Name: ContainerDriver, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull"}}}
			return p
		}, del: true, state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: "the driver container: ErrImageNeverPull", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "pod gone while running fails, never re-created", job: job(lmv1alpha1.JobStateRunning), state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed, message: `pods "eval" not found`, events: []string{EventPodMissing, EventJobCompleted}, completeTimed: true},
		{name: "cancel deletes the pod", job: job(lmv1alpha1.JobStateCancelled), pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodRunning, running) },
			del: true, state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonCancelled, message: "cancelled", events: []string{EventCancelled}, completeTimed: true},
		{name: "suspend deletes a running pod", job: func() *lmv1alpha1.LMEvalJob { j := job(lmv1alpha1.JobStateRunning); j.Spec.Suspend = true; return j }(), suspendHonor: true,
			pod: func(j *lmv1alpha1.LMEvalJob) *Pod { return pod(j, corev1.PodRunning, running) }, del: true, state: lmv1alpha1.JobStateSuspended, events: []string{EventSuspended}},
		{name: "suspended from the start makes no pod", job: func() *lmv1alpha1.LMEvalJob { j := job(""); j.Spec.Suspend = true; return j }(), suspendHonor: true, state: lmv1alpha1.JobStateSuspended, events: []string{EventSuspended}},
		{name: "suspend not honoured runs the job", job: func() *lmv1alpha1.LMEvalJob { j := job(""); j.Spec.Suspend = true; return j }(), create: true, state: lmv1alpha1.JobStateScheduled, events: []string{EventPodCreation}},
		{name: "resume makes a new pod", job: job(lmv1alpha1.JobStateSuspended), create: true, state: lmv1alpha1.JobStateScheduled, events: []string{EventResumed}},
		{name: "waits for a pod on its way out", job: job(lmv1alpha1.JobStateSuspended), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			p := pod(j, corev1.PodRunning, running)
			p.Deleting = true
			return p
		}, state: lmv1alpha1.JobStateSuspended},
		{name: "finished job stays finished", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			ts := metav1.NewTime(t0)
			j.Status.CompleteTime, j.Status.Reason = &ts, lmv1alpha1.ReasonSucceeded
			return j
		}(), state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonSucceeded, completeTimed: true},
		{name: "spec change after the end re-runs", job: func() *lmv1alpha1.LMEvalJob {
			j := job(lmv1alpha1.JobStateComplete)
			ts := metav1.NewTime(t0)
			j.Status.CompleteTime, j.Status.Reason = &ts, lmv1alpha1.ReasonSucceeded
			return j
		}(), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			p := pod(j, corev1.PodSucceeded, exited(0, "", ""))
			p.SpecHash = "older"
			return p
		},
			state: lmv1alpha1.JobStateNew, reason: lmv1alpha1.ReasonNone, events: []string{EventRerun}},
		{name: "a re-run's old pod goes, its end not taken for the new run's", job: job(lmv1alpha1.JobStateNew), pod: func(j *lmv1alpha1.LMEvalJob) *Pod {
			p := pod(j, corev1.PodSucceeded, exited(0, "", ""))
			p.SpecHash = "older"
			return p
		}, del: true, state: lmv1alpha1.JobStateNew},
		{name: "invalid spec fails the job", job: job(""), invalid: ReasonInvalidSpec, msg: "spec.outputs.pvcManaged.size must be a storage size", state: lmv1alpha1.JobStateComplete, reason: lmv1alpha1.ReasonFailed,
			message: "Input validation failed: spec.outputs.pvcManaged.size must be a storage size", events: []string{EventJobCompleted}, completeTimed: true},
		{name: "invalid settings wait", job: job(""), invalid: ReasonInvalidOperatorSettings, msg: "lmes-max-batch-size must be a whole number", state: lmv1alpha1.JobStateNew, reason: lmv1alpha1.ReasonNone, message: "lmes-max-batch-size must be a whole number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p *Pod
			if c.pod != nil {
				p = c.pod(c.job)
			}
			plan := Decide(Input{Job: c.job, Pod: p, InvalidReason: c.invalid, InvalidMessage: c.msg, SuspendHonored: c.suspendHonor, Now: t0})
			st := plan.Status
			if plan.Create != c.create || plan.DeletePod != c.del {
				t.Errorf("create %v delete %v, want %v %v", plan.Create, plan.DeletePod, c.create, c.del)
			}
			if st.State != c.state || (c.reason != "" && st.Reason != c.reason) || (c.message != "" && st.Message != c.message) {
				t.Errorf("status %s/%s/%q, want %s/%s/%q", st.State, st.Reason, st.Message, c.state, c.reason, c.message)
			}
			if got := eventReasons(plan); len(got) != len(c.events) || (len(got) > 0 && got[0] != c.events[0]) {
				t.Errorf("events %v, want %v", got, c.events)
			}
			if (st.CompleteTime != nil) != c.completeTimed {
				t.Errorf("completeTime %v", st.CompleteTime)
			}
			if c.create && (st.PodName != "eval" || st.LastScheduleTime == nil || st.ObservedGeneration != 1) {
				t.Errorf("a created pod's status: %+v", st)
			}
			if c.invalid != "" && !meta.IsStatusConditionFalse(st.Conditions, TypeValid) {
				t.Errorf("Valid condition: %+v", st.Conditions)
			}
		})
	}
}

func TestRefusedPermitIsACondition(t *testing.T) {
	j := job("")
	yes := true
	j.Spec.AllowOnline, j.Spec.AllowCodeExecution = &yes, &yes
	s := defaults(t)
	plan := Decide(Input{Job: j, Permits: PermitsFor(&j.Spec, s), Now: t0})
	c := meta.FindStatusCondition(plan.Status.Conditions, TypePermitted)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonPermitRefused ||
		c.Message != "the operator's settings deny spec.allowOnline and spec.allowCodeExecution: the job runs without ("+s.PermitsFrom+" set it to allow)" {
		t.Fatalf("condition %+v", c)
	}
	if !plan.Create {
		t.Fatal("a refused permit stopped the job")
	}
}

func TestSpecHashIgnoresSuspend(t *testing.T) {
	j := job("")
	h := SpecHash(&j.Spec)
	j.Spec.Suspend = true
	if SpecHash(&j.Spec) != h {
		t.Fatal("suspend changed the hash")
	}
	j.Spec.Limit = "5"
	if SpecHash(&j.Spec) == h {
		t.Fatal("limit did not change the hash")
	}
}

// A job's Kueue quota is handed back only once its pod no longer runs, as
// the kubelet reports it, whatever the job's status says: the driver's
// token can write the status (the second security review's finding: a
// status patched to Complete with a completeTime freed the quota of a pod
// that kept running).
func TestQuotaReleasableOnlyWhenThePodEnded(t *testing.T) {
	running := &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	done := func() *lmv1alpha1.LMEvalJob {
		j := job(lmv1alpha1.JobStateComplete)
		ts := metav1.NewTime(t0)
		j.Status.CompleteTime, j.Status.Reason = &ts, lmv1alpha1.ReasonSucceeded
		return j
	}()
	deleting := pod(done, corev1.PodRunning, running)
	deleting.Deleting = true
	for _, c := range []struct {
		name string
		job  *lmv1alpha1.LMEvalJob
		pod  *Pod
		want bool
	}{
		{"complete, the pod gone", done, nil, true},
		{"complete, the pod succeeded", done, pod(done, corev1.PodSucceeded, &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}), true},
		{"complete, the pod failed", done, pod(done, corev1.PodFailed, nil), true},
		{"complete in the status, the pod running", done, pod(done, corev1.PodRunning, running), false},
		{"complete in the status, the pod pending", done, pod(done, corev1.PodPending, nil), false},
		{"complete, the pod being deleted but still running", done, deleting, false},
		{"running", job(lmv1alpha1.JobStateRunning), nil, false},
	} {
		if got := QuotaReleasable(&c.job.Status, c.pod); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// And the state machine never leaves such a status for the controller
	// to act on: its plan for a forged end is a running job.
	plan := Decide(Input{Job: done, Pod: pod(done, corev1.PodRunning, running), Now: t0})
	if QuotaReleasable(&plan.Status, pod(done, corev1.PodRunning, running)) || plan.DeletePod {
		t.Errorf("a forged end of a running job: %+v", plan)
	}
}

// A spec edit that arrives as a job completes re-runs it, whatever order
// the operator's passes see things in (issue 52: TestRerunQueuesAgain went
// red under load): the pass after the re-run was decided may still see the
// old pod, not yet deleting, in its cache; it must delete it and stay New,
// never take the old pod's end for the new run's, with or without Kueue.
// And a re-run whose status write failed is decided again from the pod,
// which the decision does not delete before the status says New.
func TestRerunSurvivesEveryInterleaving(t *testing.T) {
	done := func() *lmv1alpha1.LMEvalJob {
		j := job(lmv1alpha1.JobStateComplete)
		ts := metav1.NewTime(t0)
		j.Status.CompleteTime, j.Status.Reason, j.Status.Message = &ts, lmv1alpha1.ReasonSucceeded, "job completed"
		return j
	}()
	edited := done.DeepCopy()
	edited.Spec.Limit = "6"
	oldPod := pod(done, corev1.PodSucceeded, &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}})
	for _, queue := range []*Queue{nil, {Name: "user-queue"}} {
		// Pass 1: the edit is seen; the status says New, the pod stays.
		p1 := Decide(Input{Job: edited, Pod: oldPod, Queue: queue, SuspendHonored: queue == nil, Now: t0})
		if p1.Status.State != lmv1alpha1.JobStateNew || p1.DeletePod || p1.Create {
			t.Fatalf("queue %v: pass 1 %+v", queue, p1)
		}
		// Its status write failed (a conflict): the next pass, from the
		// same Complete status and pod, decides the same.
		again := Decide(Input{Job: edited, Pod: oldPod, Queue: queue, SuspendHonored: queue == nil, Now: t0})
		if again.Status.State != lmv1alpha1.JobStateNew || again.DeletePod {
			t.Fatalf("queue %v: the re-run is lost after a failed write: %+v", queue, again)
		}
		// Pass 2: New, and the cache still holds the old pod, not deleting.
		next := edited.DeepCopy()
		next.Status = p1.Status
		p2 := Decide(Input{Job: next, Pod: oldPod, Queue: queue, SuspendHonored: queue == nil, Now: t0})
		if p2.Status.State != lmv1alpha1.JobStateNew || !p2.DeletePod || p2.Create {
			t.Fatalf("queue %v: pass 2 took the old pod's end: %+v", queue, p2.Status)
		}
		// Pass 3: the pod deleting, then gone: the new run is made (or
		// queued).
		deleting := *oldPod
		deleting.Deleting = true
		if p3 := Decide(Input{Job: next, Pod: &deleting, Queue: queue, SuspendHonored: queue == nil, Now: t0}); p3.Create || p3.Status.State == lmv1alpha1.JobStateComplete {
			t.Fatalf("queue %v: pass 3 %+v", queue, p3.Status)
		}
		p4 := Decide(Input{Job: next, Queue: queue, SuspendHonored: queue == nil, Now: t0})
		if queue == nil && (!p4.Create || p4.Status.State != lmv1alpha1.JobStateScheduled) {
			t.Fatalf("the new run is not made: %+v", p4)
		}
		if queue != nil && (p4.Create || p4.Status.State != lmv1alpha1.JobStateSuspended) {
			t.Fatalf("the new run does not wait for Kueue: %+v", p4)
		}
	}
}

// A pass that reads a stale job (its cache behind the status the last pass
// wrote) makes the pod and fails to write the status (a conflict). The
// next pass, from the newer status (Suspended, New) and the pod it finds,
// must say Scheduled: else the job waits as Suspended beside its own pod
// (TestEvictedJobIsSuspendedAndRequeued and TestForgedEndKeepsTheQuota saw
// that on a loaded machine), and never leaves it before the pod runs.
func TestPodMadeByAPassWhoseStatusWasLost(t *testing.T) {
	admitted := &Queue{Name: "q", Admission: &Admission{Reserved: true, Admitted: true, ClusterQueue: "cq"}}
	for _, c := range []struct {
		name  string
		state lmv1alpha1.JobState
		queue *Queue
	}{
		{"queued, Suspended by the pass before", lmv1alpha1.JobStateSuspended, admitted},
		{"queued, New", lmv1alpha1.JobStateNew, admitted},
		{"unqueued, New", lmv1alpha1.JobStateNew, nil},
		{"unqueued, resumed from Suspended", lmv1alpha1.JobStateSuspended, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			stale := job("")
			// The stale pass: it makes the pod; its status write is lost.
			first := Decide(Input{Job: stale, Queue: c.queue, SuspendHonored: c.queue == nil, Now: t0})
			require.True(t, first.Create, "the stale pass makes the pod")

			newer := job(c.state)
			created := pod(newer, corev1.PodPending, nil)
			plan := Decide(Input{Job: newer, Pod: created, Queue: c.queue, SuspendHonored: c.queue == nil, Now: t0})
			assert.False(t, plan.Create, "the pod exists")
			assert.False(t, plan.DeletePod, "the pod is the job's run")
			assert.Equal(t, lmv1alpha1.JobStateScheduled, plan.Status.State, "the status says the pod runs")
			assert.Equal(t, "eval", plan.Status.PodName)
			assert.NotNil(t, plan.Status.LastScheduleTime)

			// The kubelet starts it: Running, as for any run.
			next := newer.DeepCopy()
			next.Status = plan.Status
			plan = Decide(Input{Job: next, Pod: pod(next, corev1.PodRunning, &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), Queue: c.queue, SuspendHonored: c.queue == nil, Now: t0})
			assert.Equal(t, lmv1alpha1.JobStateRunning, plan.Status.State)
		})
	}
}
