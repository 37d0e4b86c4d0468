package lmeval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// Kueue's own names (jobframework.GetWorkloadNameForOwnerWithGVK), computed
// independently (Python's hashlib over Kueue's hash input).
func TestWorkloadNameIsKueues(t *testing.T) {
	assert.Equal(t, "lmevaljob-evaljob-sample-49622", WorkloadName("evaljob-sample", "0c8a3f3e-1111-2222-3333-444455556666"))
	long := WorkloadName(strings.Repeat("j", 300), "u")
	assert.Len(t, long, 253)
	assert.True(t, strings.HasSuffix(long, "-0886c"), long)
}

func workloadWith(t *testing.T, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(WorkloadGVK)
	u.SetName("w")
	u.SetResourceVersion("42")
	return u
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": string(status), "reason": reason, "message": msg, "lastTransitionTime": "2026-12-06T03:00:00Z"}
}

func TestObserveWorkload(t *testing.T) {
	a, err := ObserveWorkload(nil)
	require.NoError(t, err)
	assert.Nil(t, a)
	assert.False(t, a.Running(), "no Workload: not admitted")

	pending, err := ObserveWorkload(workloadWith(t, map[string]any{"conditions": []any{
		cond("QuotaReserved", metav1.ConditionFalse, "Pending", "couldn't assign flavors to pod set main: insufficient quota for cpu"),
	}}))
	require.NoError(t, err)
	assert.False(t, pending.Running())
	assert.Contains(t, pending.PendingMsg, "insufficient quota")

	admitted := map[string]any{
		"admission": map[string]any{"clusterQueue": "cq", "podSetAssignments": []any{
			map[string]any{"name": "main", "flavors": map[string]any{"cpu": "b", "memory": "a", "nvidia.com/gpu": "b"}},
			map[string]any{"name": "other", "flavors": map[string]any{"cpu": "z"}},
		}},
		"admissionChecks": []any{map[string]any{"name": "prov", "podSetUpdates": []any{
			map[string]any{"name": "main", "nodeSelector": map[string]any{"zone": "a"}, "labels": map[string]any{"l": "1"},
				"tolerations": []any{map[string]any{"key": "k", "operator": "Exists"}}},
		}}},
		"conditions": []any{
			cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", ""),
			cond("Admitted", metav1.ConditionTrue, "Admitted", ""),
		},
	}
	a, err = ObserveWorkload(workloadWith(t, admitted))
	require.NoError(t, err)
	assert.True(t, a.Running())
	assert.Equal(t, "cq", a.ClusterQueue)
	assert.Equal(t, []string{"a", "b"}, a.Flavors, "the main pod set's flavors, once each")
	p := PlacementOf(a, []Flavor{{NodeLabels: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}})
	assert.Equal(t, map[string]string{"pool": "gpu", "zone": "a"}, p.NodeSelector)
	assert.Len(t, p.Tolerations, 2)
	assert.Equal(t, map[string]string{"l": "1"}, p.Labels)

	// Quota reserved but an admission check not ready: not admitted.
	admitted["conditions"] = []any{cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", ""), cond("Admitted", metav1.ConditionFalse, "UnsatisfiedChecks", "")}
	a, err = ObserveWorkload(workloadWith(t, admitted))
	require.NoError(t, err)
	assert.False(t, a.Running())

	admitted["conditions"] = []any{
		cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", ""),
		cond("Admitted", metav1.ConditionTrue, "Admitted", ""),
		cond("Evicted", metav1.ConditionTrue, "Preempted", "to make room"),
	}
	a, err = ObserveWorkload(workloadWith(t, admitted))
	require.NoError(t, err)
	assert.False(t, a.Running(), "evicted")
	assert.True(t, a.Evicted)

	_, err = ObserveWorkload(workloadWith(t, map[string]any{"conditions": "not a list"}))
	assert.Error(t, err, "a malformed status is an error, not a guess")
}

func patchOf(t *testing.T, b []byte) (map[string]any, []metav1.Condition) {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal(b, &p))
	raw, err := json.Marshal(p["status"].(map[string]any)["conditions"])
	require.NoError(t, err)
	var cs []metav1.Condition
	require.NoError(t, json.Unmarshal(raw, &cs))
	return p, cs
}

// As Kueue's jobframework: Requeued True after a preemption or node
// failure, False otherwise (Kueue requeues a deactivated Workload itself).
func TestEvictionHandled(t *testing.T) {
	for reason, requeued := range map[string]metav1.ConditionStatus{"Preempted": metav1.ConditionTrue, "NodeFailures": metav1.ConditionTrue, "Deactivated": metav1.ConditionFalse, "PodsReadyTimeout": metav1.ConditionFalse} {
		a, err := ObserveWorkload(workloadWith(t, map[string]any{
			"admission": map[string]any{"clusterQueue": "cq"},
			"conditions": []any{
				cond("QuotaReserved", metav1.ConditionTrue, "QuotaReserved", ""),
				cond("Admitted", metav1.ConditionTrue, "Admitted", ""),
				cond("Evicted", metav1.ConditionTrue, reason, "why"),
			},
		}))
		require.NoError(t, err)
		b, err := a.EvictionHandled(t0)
		require.NoError(t, err)
		p, cs := patchOf(t, b)
		st := p["status"].(map[string]any)
		v, has := st["admission"]
		assert.True(t, has && v == nil, "admission removed")
		assert.Equal(t, "42", p["metadata"].(map[string]any)["resourceVersion"], "guarded by the version read")
		assert.Equal(t, requeued, meta.FindStatusCondition(cs, "Requeued").Status, reason)
		assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(cs, "QuotaReserved").Status)
		assert.Equal(t, "Pending", meta.FindStatusCondition(cs, "QuotaReserved").Reason)
		assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(cs, "Admitted").Status)
		assert.True(t, meta.IsStatusConditionTrue(cs, "Evicted"), "Kueue resets Evicted at the next reservation")
	}
}

func TestFinishedPatch(t *testing.T) {
	a, err := ObserveWorkload(workloadWith(t, map[string]any{"conditions": []any{cond("Admitted", metav1.ConditionTrue, "Admitted", "")}}))
	require.NoError(t, err)
	b, err := a.FinishedPatch(false, "exit status 3", t0)
	require.NoError(t, err)
	p, cs := patchOf(t, b)
	_, has := p["status"].(map[string]any)["admission"]
	assert.False(t, has, "the admission is kept")
	f := meta.FindStatusCondition(cs, "Finished")
	require.NotNil(t, f)
	assert.Equal(t, "Failed", f.Reason)
	assert.Equal(t, "exit status 3", f.Message)
	assert.True(t, meta.IsStatusConditionTrue(cs, "Admitted"), "other conditions kept (a merge patch replaces the list)")
}

func TestWorkloadObject(t *testing.T) {
	j := job(lmv1alpha1.JobStateNew)
	j.UID = "uid-1"
	j.Labels = map[string]string{KueueQueueLabel: "q"}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "i"}}}
	u, err := Workload(j, "v1beta2", spec, &Priority{Class: "high", Value: 7}, map[string]string{"ai-stack-operator.io/managed": "true"})
	require.NoError(t, err)
	assert.Equal(t, WorkloadName("eval", "uid-1"), u.GetName())
	assert.Equal(t, "team-a", u.GetNamespace())
	assert.Equal(t, "true", u.GetLabels()["ai-stack-operator.io/managed"])
	assert.Equal(t, SpecHash(&j.Spec), u.GetAnnotations()[AnnotationSpecHash])
	q, _, _ := unstructured.NestedString(u.Object, "spec", "queueName")
	assert.Equal(t, "q", q)
	v, _, _ := unstructured.NestedInt64(u.Object, "spec", "priority")
	assert.EqualValues(t, 7, v)
	sets, _, _ := unstructured.NestedSlice(u.Object, "spec", "podSets")
	require.Len(t, sets, 1)
	tmpl := &corev1.PodTemplateSpec{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(sets[0].(map[string]any)["template"].(map[string]any), tmpl))
	assert.Equal(t, spec, tmpl.Spec)

	ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "priorityClassRef")
	assert.Equal(t, map[string]string{"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}, ref)

	// Kueue before 0.15 (v1beta1 only): its names for the same reference.
	u, err = Workload(j, "v1beta1", spec, &Priority{Class: "high", Value: 7}, nil)
	require.NoError(t, err)
	assert.Equal(t, "kueue.x-k8s.io/v1beta1", u.GetAPIVersion())
	src, _, _ := unstructured.NestedString(u.Object, "spec", "priorityClassSource")
	name, _, _ := unstructured.NestedString(u.Object, "spec", "priorityClassName")
	assert.Equal(t, []string{"kueue.x-k8s.io/workloadpriorityclass", "high"}, []string{src, name})

	u, err = Workload(j, "v1beta2", spec, nil, nil)
	require.NoError(t, err)
	_, has, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "priorityClassRef")
	assert.False(t, has, "no priority class: Kueue's default")
}

// A queued job has no pod until admitted, loses it when evicted, and is
// observed to its end when its pod finished meanwhile.
func TestDecideQueued(t *testing.T) {
	admitted := &Admission{Reserved: true, Admitted: true, ClusterQueue: "cq"}
	queue := func(a *Admission) *Queue { return &Queue{Name: "q", Admission: a} }

	j := job(lmv1alpha1.JobStateNew)
	j.Spec.Suspend = true
	plan := Decide(Input{Job: j, Queue: queue(nil), Now: t0})
	assert.False(t, plan.Create)
	assert.Equal(t, lmv1alpha1.JobStateSuspended, plan.Status.State)
	assert.Equal(t, []string{EventSuspended}, eventReasons(plan))
	c := meta.FindStatusCondition(plan.Status.Conditions, TypeAdmitted)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)

	j.Status = plan.Status
	plan = Decide(Input{Job: j, Queue: queue(admitted), Now: t0})
	assert.True(t, plan.Create, "admitted: the pod, though spec.suspend is true (Kueue's)")
	assert.Equal(t, lmv1alpha1.JobStateScheduled, plan.Status.State)
	assert.Equal(t, []string{EventPodCreation}, eventReasons(plan))
	assert.True(t, meta.IsStatusConditionTrue(plan.Status.Conditions, TypeAdmitted))

	j.Status = plan.Status
	evicted := &Admission{Reserved: true, Admitted: true, Evicted: true, EvictReason: "Preempted", EvictMsg: "room"}
	running := pod(j, corev1.PodRunning, &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
	plan = Decide(Input{Job: j, Pod: running, Queue: queue(evicted), Now: t0})
	assert.True(t, plan.DeletePod)
	assert.Equal(t, lmv1alpha1.JobStateSuspended, plan.Status.State)
	assert.Contains(t, plan.Events[0].Message, "Preempted")

	j.Status = plan.Status
	plan = Decide(Input{Job: j, Queue: queue(admitted), Now: t0})
	assert.True(t, plan.Create)
	assert.Equal(t, []string{EventResumed}, eventReasons(plan))

	// The pod finished as the eviction came: the end is observed.
	j.Status = plan.Status
	done := pod(j, corev1.PodSucceeded, &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}})
	plan = Decide(Input{Job: j, Pod: done, Queue: queue(evicted), Now: t0})
	assert.False(t, plan.DeletePod)
	assert.Equal(t, lmv1alpha1.JobStateComplete, plan.Status.State)

	// Not queued: no Admitted condition.
	plan = Decide(Input{Job: j, Pod: done, Now: t0})
	assert.Nil(t, meta.FindStatusCondition(plan.Status.Conditions, TypeAdmitted))

	// A problem making the Workload is named.
	j = job(lmv1alpha1.JobStateNew)
	plan = Decide(Input{Job: j, Queue: &Queue{Name: "q", Problem: "metadata.labels[kueue.x-k8s.io/priority-class]: no such class"}, Now: t0})
	c = meta.FindStatusCondition(plan.Status.Conditions, TypeAdmitted)
	require.NotNil(t, c)
	assert.Equal(t, "WorkloadNotCreated", c.Reason)
	assert.False(t, plan.Create)
}
