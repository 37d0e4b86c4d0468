// Package kueue runs LMEvalJobs through Kueue's admission against a real
// kube-apiserver and etcd that serve Kueue's own CRDs (kueue v0.17.0's,
// copied by `hack/tools.sh kueue` into bin/kueue/crds): the Workload the
// operator makes must pass Kueue's schema and validation rules. The test
// plays Kueue's scheduler: it reserves quota and admits the Workload, or
// evicts it, by writing the Workload's status as Kueue does; the operator
// never learns who wrote it. There is no kubelet: the test ends pods.
//
// It has a control plane of its own because a cluster that serves Kueue
// changes what every queued LMEvalJob does (test/integration's jobs carry
// upstream's queue label and run without Kueue).
package kueue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

var (
	env     *framework.Env
	k8s     client.Client
	restCfg *rest.Config
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the control plane and copies Kueue's CRDs into bin/)")
		return 1
	}
	level := zapcore.ErrorLevel
	if os.Getenv("TEST_VERBOSE") != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(level)))
	root := framework.Root()
	testEnv := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "bin", "kueue", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		return 1
	}
	defer func() { _ = testEnv.Stop() }()
	if env, err = framework.NewEnv(cfg, 30*time.Second); err != nil {
		return framework.Fail(err)
	}
	k8s, restCfg = env.Client, cfg
	if err := framework.CreateOperatorNamespace(k8s); err != nil {
		return framework.Fail(err)
	}
	mgr, err := framework.NewManager(cfg, func(o *operator.ManagerOptions) {
		o.Watches, o.LMEvalJobs, o.DriverImage = nil, true, "quay.io/ai-stack-operator/ai-stack-operator:test"
	})
	if err != nil {
		return framework.Fail(err)
	}
	stop := framework.Start(mgr)
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	return m.Run()
}

func createJob(t *testing.T, ns string, labels map[string]string) *lmv1alpha1.LMEvalJob {
	return createJobWith(t, ns, "", labels)
}

// createJobWith creates upstream's Kueue example (framework.UpstreamLMEvalJobSample)
// named name ("": evaljob-sample, its generateName's stem).
func createJobWith(t *testing.T, ns, name string, labels map[string]string) *lmv1alpha1.LMEvalJob {
	t.Helper()
	job := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(framework.UpstreamLMEvalJobSample), job))
	job.Namespace, job.GenerateName, job.Name = ns, "", name
	if name == "" {
		job.Name = "evaljob-sample"
	}
	for k, v := range labels {
		job.Labels[k] = v
	}
	require.NoError(t, k8s.Create(context.Background(), job))
	return job
}

func waitJob(t *testing.T, job *lmv1alpha1.LMEvalJob, state lmv1alpha1.JobState, reason lmv1alpha1.Reason) *lmv1alpha1.LMEvalJob {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			// What the job's Workload said when the job did not get there.
			wl := &unstructured.Unstructured{}
			wl.SetGroupVersionKind(lmeval.WorkloadGVK)
			err := k8s.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: lmeval.WorkloadName(job.Name, string(job.UID))}, wl)
			st, _, _ := unstructured.NestedMap(wl.Object, "status")
			b, _ := json.Marshal(st)
			t.Logf("the job's Workload (%v): resourceVersion %s, status %s", err, wl.GetResourceVersion(), b)
		}
	})
	return env.WaitLMEvalJob(t, job.Namespace, job.Name, state, reason)
}

// workload waits for the job's Workload and returns it.
func workload(t *testing.T, job *lmv1alpha1.LMEvalJob, what string, cond func(*unstructured.Unstructured) error) *unstructured.Unstructured {
	t.Helper()
	wl := &unstructured.Unstructured{}
	env.Eventually(t, what, func() error {
		wl = &unstructured.Unstructured{}
		wl.SetGroupVersionKind(lmeval.WorkloadGVK)
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: lmeval.WorkloadName(job.Name, string(job.UID))}, wl); err != nil {
			return err
		}
		return cond(wl)
	})
	return wl
}

func exists(*unstructured.Unstructured) error { return nil }

func conditions(t *testing.T, wl *unstructured.Unstructured) []metav1.Condition {
	t.Helper()
	raw, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	b, err := json.Marshal(raw)
	require.NoError(t, err)
	var out []metav1.Condition
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func hasCondition(typ string, status metav1.ConditionStatus, reason string) func(*unstructured.Unstructured) error {
	return func(wl *unstructured.Unstructured) error {
		raw, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		b, _ := json.Marshal(raw)
		var cs []metav1.Condition
		_ = json.Unmarshal(b, &cs)
		c := meta.FindStatusCondition(cs, typ)
		if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("condition %s: %+v", typ, c)
		}
		return nil
	}
}

// kueueWrites the Workload's status as Kueue's scheduler does (a merge
// patch of the conditions and admission given).
func kueueWrites(t *testing.T, wl *unstructured.Unstructured, admission map[string]any, conds ...metav1.Condition) {
	t.Helper()
	now := metav1.Now()
	all := conditions(t, wl)
	for _, c := range conds {
		c.LastTransitionTime = now
		meta.SetStatusCondition(&all, c)
	}
	status := map[string]any{"conditions": all}
	if admission != nil {
		status["admission"] = admission
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	require.NoError(t, err)
	require.NoError(t, k8s.Status().Patch(context.Background(), wl, client.RawPatch(types.MergePatchType, patch)))
}

// admit reserves quota in played-queue (a ClusterQueue that Kueue, in
// make test-kueue, does not have) on the flavor and admits.
func admit(t *testing.T, wl *unstructured.Unstructured, flavor string) {
	t.Helper()
	kueueWrites(t, wl, map[string]any{
		"clusterQueue": "played-queue",
		"podSetAssignments": []any{map[string]any{
			"name": lmeval.PodSetName, "count": int64(1),
			"flavors":       map[string]any{"cpu": flavor},
			"resourceUsage": map[string]any{"cpu": "2"},
		}},
	},
		metav1.Condition{Type: "QuotaReserved", Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "Quota reserved in ClusterQueue played-queue"},
		metav1.Condition{Type: "Admitted", Status: metav1.ConditionTrue, Reason: "Admitted", Message: "The workload is admitted"},
	)
}

func flavor(t *testing.T, name string, nodeLabels map[string]string, tolerations ...corev1.Toleration) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(lmeval.ResourceFlavorGVK)
	u.SetName(name)
	if nodeLabels != nil {
		nl := map[string]any{}
		for k, v := range nodeLabels {
			nl[k] = v
		}
		u.Object["spec"].(map[string]any)["nodeLabels"] = nl
	}
	if len(tolerations) > 0 {
		var ts []any
		for _, tol := range tolerations {
			b, _ := json.Marshal(tol)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			ts = append(ts, m)
		}
		u.Object["spec"].(map[string]any)["tolerations"] = ts
	}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), u)))
}

func pod(t *testing.T, job *lmv1alpha1.LMEvalJob) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: job.Name}, p))
	return p
}

func noPod(t *testing.T, job *lmv1alpha1.LMEvalJob) {
	t.Helper()
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: job.Name}, &corev1.Pod{})
	assert.True(t, apierrors.IsNotFound(err), "no pod: %v", err)
}

// finishPod plays the kubelet: the pod ran to its end.
func finishPod(t *testing.T, job *lmv1alpha1.LMEvalJob) {
	t.Helper()
	p := pod(t, job)
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: lmeval.ContainerMain, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	require.NoError(t, k8s.Status().Update(context.Background(), p))
}

func admittedCondition(t *testing.T, job *lmv1alpha1.LMEvalJob, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	env.Eventually(t, fmt.Sprintf("Admitted=%s %s", status, reason), func() error {
		j := &lmv1alpha1.LMEvalJob{}
		if err := env.Get(job.Namespace, job.Name, j); err != nil {
			return err
		}
		c = meta.FindStatusCondition(j.Status.Conditions, lmeval.TypeAdmitted)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Admitted: %+v", c)
		}
		return nil
	})
	return c
}

var workloadName = regexp.MustCompile(`^lmevaljob-evaljob-sample-[0-9a-f]{5}$`)

// Upstream's Kueue example, unchanged: the job waits (Suspended, no pod)
// with a Workload that Kueue's schema admits, runs once Kueue admits it on
// the flavor's nodes, and its end marks the Workload Finished. The job's
// spec is never written (suspend stays true: the admission decides).
func TestQueuedJobRunsWhenKueueAdmitsIt(t *testing.T) {
	ns := env.NewNamespace(t, "kueue")
	wpc := &unstructured.Unstructured{Object: map[string]any{"value": int64(1000), "description": "evaluations first"}}
	wpc.SetGroupVersionKind(lmeval.WorkloadPriorityClassGVK)
	wpc.SetName("high")
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), wpc)))
	gpu := corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	flavor(t, "gpu-nodes", map[string]string{"example.com/pool": "gpu"}, gpu)

	job := createJob(t, ns, map[string]string{lmeval.KueuePriorityLabel: "high"})
	job = waitJob(t, job, lmv1alpha1.JobStateSuspended, "")
	c := admittedCondition(t, job, metav1.ConditionFalse, lmeval.ReasonPending)
	assert.Contains(t, c.Message, `LocalQueue "user-queue"`)
	wl := workload(t, job, "the job's Workload", exists)
	noPod(t, job)

	assert.Regexp(t, workloadName, wl.GetName(), "Kueue's name for a job's Workload")
	assert.True(t, metav1.IsControlledBy(wl, job), "owned by the job: deleted with it")
	q, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName")
	assert.Equal(t, "user-queue", q)
	prio, _, _ := unstructured.NestedInt64(wl.Object, "spec", "priority")
	assert.EqualValues(t, 1000, prio)
	ref, _, _ := unstructured.NestedStringMap(wl.Object, "spec", "priorityClassRef")
	assert.Equal(t, map[string]string{"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}, ref)
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	require.Len(t, sets, 1)
	set := sets[0].(map[string]any)
	assert.Equal(t, lmeval.PodSetName, set["name"])
	assert.EqualValues(t, 1, set["count"])
	containers, _, _ := unstructured.NestedSlice(set, "template", "spec", "containers")
	require.NotEmpty(t, containers)
	cpu, _, _ := unstructured.NestedString(containers[0].(map[string]any), "resources", "requests", "cpu")
	assert.Equal(t, "2", cpu, "Kueue counts the job's requests")

	admit(t, wl, "gpu-nodes")
	waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
	c = admittedCondition(t, job, metav1.ConditionTrue, lmeval.ReasonAdmitted)
	assert.Contains(t, c.Message, "played-queue")
	p := pod(t, job)
	assert.Equal(t, "gpu", p.Spec.NodeSelector["example.com/pool"], "the flavor's node labels")
	assert.Contains(t, p.Spec.Tolerations, gpu, "the flavor's tolerations")
	assert.NotContains(t, p.Labels, lmeval.KueueQueueLabel, "Kueue's pod integration must not queue the pod again")
	assert.Equal(t, resource.MustParse("2"), p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU])

	finishPod(t, job)
	waitJob(t, job, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	workload(t, job, "the Workload Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded"))

	final := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, env.Get(ns, job.Name, final))
	assert.True(t, final.Spec.Suspend, "the job's spec as the user wrote it")
	assert.Equal(t, job.Generation, final.Generation, "the job's spec as the user wrote it")
}

// Kueue preempts a running job: its pod is deleted, the job is Suspended
// and the Workload's quota is handed back (no admission, QuotaReserved
// False, Requeued True), as Kueue's jobframework does; admitted again, the
// job resumes and completes.
func TestEvictedJobIsSuspendedAndRequeued(t *testing.T) {
	ns := env.NewNamespace(t, "kueue-evict")
	flavor(t, "default-flavor", nil)
	job := createJob(t, ns, nil)
	wl := workload(t, job, "the job's Workload", exists)
	admit(t, wl, "default-flavor")
	job = waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
	first := pod(t, job).UID

	wl = workload(t, job, "the admitted Workload", hasCondition("Admitted", metav1.ConditionTrue, ""))
	kueueWrites(t, wl, nil,
		metav1.Condition{Type: "Evicted", Status: metav1.ConditionTrue, Reason: "Preempted", Message: "Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue"},
		metav1.Condition{Type: "Preempted", Status: metav1.ConditionTrue, Reason: "InClusterQueue", Message: "Preempted to accommodate a workload"},
	)
	waitJob(t, job, lmv1alpha1.JobStateSuspended, "")
	env.Eventually(t, "the pod deleted", env.GoneFrom(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}))
	admittedCondition(t, job, metav1.ConditionFalse, "Evicted")
	env.Eventually(t, "Suspended event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventSuspended) })
	wl = workload(t, job, "the quota handed back", func(wl *unstructured.Unstructured) error {
		if _, has, _ := unstructured.NestedMap(wl.Object, "status", "admission"); has {
			return fmt.Errorf("status.admission still set")
		}
		for _, check := range []func(*unstructured.Unstructured) error{
			hasCondition("QuotaReserved", metav1.ConditionFalse, "Pending"),
			hasCondition("Admitted", metav1.ConditionFalse, ""),
			hasCondition("Requeued", metav1.ConditionTrue, "Preempted"),
		} {
			if err := check(wl); err != nil {
				return err
			}
		}
		return nil
	})

	// Kueue admits it again (it resets Evicted at the next reservation).
	kueueWrites(t, wl, nil, metav1.Condition{Type: "Evicted", Status: metav1.ConditionFalse, Reason: "QuotaReserved", Message: "Previously: Preempted"})
	wl = workload(t, job, "Evicted False", hasCondition("Evicted", metav1.ConditionFalse, ""))
	admit(t, wl, "default-flavor")
	waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
	env.Eventually(t, "Resumed event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventResumed) })
	assert.NotEqual(t, first, pod(t, job).UID, "a new pod")
	finishPod(t, job)
	waitJob(t, job, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	workload(t, job, "the Workload Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded"))
}

// A job re-run after it completed (its spec edited) queues again: the
// finished Workload is replaced by one for the new spec, and no pod runs
// until Kueue admits it.
func TestRerunQueuesAgain(t *testing.T) {
	ns := env.NewNamespace(t, "kueue-rerun")
	flavor(t, "default-flavor", nil)
	job := createJob(t, ns, nil)
	wl := workload(t, job, "the job's Workload", exists)
	admit(t, wl, "default-flavor")
	job = waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
	finishPod(t, job)
	waitJob(t, job, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	old := workload(t, job, "Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded")).GetUID()

	env.Update(t, job, func() { job.Spec.Limit = "6" })
	waitJob(t, job, lmv1alpha1.JobStateSuspended, "")
	wl = workload(t, job, "a new Workload for the new spec", func(wl *unstructured.Unstructured) error {
		if wl.GetUID() == old {
			return fmt.Errorf("still the finished one")
		}
		return nil
	})
	assert.Equal(t, lmeval.SpecHash(&job.Spec), wl.GetAnnotations()[lmeval.AnnotationSpecHash])
	env.Eventually(t, "the old pod deleted", env.GoneFrom(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}))
	admit(t, wl, "default-flavor")
	waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
}

// A job labelled with a WorkloadPriorityClass that does not exist gets no
// Workload and a condition naming the label; one without a queue label
// runs at once, Kueue or not (never stricter than upstream without Kueue's
// queue-name requirement).
func TestPriorityClassMissingAndUnqueuedJobs(t *testing.T) {
	ns := env.NewNamespace(t, "kueue-misc")
	job := createJob(t, ns, map[string]string{lmeval.KueuePriorityLabel: "nope"})
	c := admittedCondition(t, job, metav1.ConditionFalse, "WorkloadNotCreated")
	assert.Contains(t, c.Message, "metadata.labels[kueue.x-k8s.io/priority-class]")
	assert.Contains(t, c.Message, `"nope"`)
	noPod(t, job)

	plain := framework.LMEvalJob(ns, "plain")
	require.NoError(t, k8s.Create(context.Background(), plain))
	waitJob(t, plain, lmv1alpha1.JobStateScheduled, "")
	wls := &unstructured.UnstructuredList{}
	wls.SetGroupVersionKind(lmeval.WorkloadGVK.GroupVersion().WithKind("WorkloadList"))
	require.NoError(t, k8s.List(context.Background(), wls, client.InNamespace(ns)))
	assert.Empty(t, wls.Items, "no Workload for an unqueued job")
	j := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, env.Get(ns, plain.Name, j))
	assert.Nil(t, meta.FindStatusCondition(j.Status.Conditions, lmeval.TypeAdmitted))
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// A Workload of the job's name that is not the job's (the name is Kueue's
// for the job, so only someone writing it on purpose makes one) is never
// taken over: the job says so and waits.
func TestAnotherWorkloadOfTheJobsNameIsNamed(t *testing.T) {
	ns := env.NewNamespace(t, "kueue-taken")
	// A missing priority class holds the job's Workload back meanwhile.
	job := createJob(t, ns, map[string]string{lmeval.KueuePriorityLabel: "later"})
	admittedCondition(t, job, metav1.ConditionFalse, "WorkloadNotCreated")
	foreign := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"queueName": "user-queue",
		"podSets": []any{map[string]any{"name": "main", "count": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "someone/else"}}}}}},
	}}}
	foreign.SetGroupVersionKind(lmeval.WorkloadGVK)
	foreign.SetNamespace(ns)
	foreign.SetName(lmeval.WorkloadName(job.Name, string(job.UID)))
	require.NoError(t, k8s.Create(context.Background(), foreign))
	wpc := &unstructured.Unstructured{Object: map[string]any{"value": int64(1)}}
	wpc.SetGroupVersionKind(lmeval.WorkloadPriorityClassGVK)
	wpc.SetName("later")
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), wpc)))
	env.Update(t, job, func() { job.Annotations = map[string]string{"touched": "yes"} }) // a reconcile now
	env.Eventually(t, "the foreign Workload named", func() error {
		c := admittedCondition(t, job, metav1.ConditionFalse, "WorkloadNotCreated")
		if !strings.Contains(c.Message, "is not this job's") {
			return errorf("message %q", c.Message)
		}
		return nil
	})
	noPod(t, job)
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(lmeval.WorkloadGVK)
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKeyFromObject(foreign), got))
	assert.Empty(t, got.GetOwnerReferences(), "not taken over")
}

// runPod plays the kubelet: the pod's main container runs.
func runPod(t *testing.T, job *lmv1alpha1.LMEvalJob) {
	t.Helper()
	p := pod(t, job)
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: lmeval.ContainerMain, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	require.NoError(t, k8s.Status().Update(context.Background(), p))
}

// A job's own pod cannot free its Kueue quota while it runs (the second
// security review's finding: the driver's token, mounted in the pod, patched
// the job's status to Complete with a completeTime; the operator marked the
// Workload Finished, Kueue handed the quota back, and the pod ran on). The
// end comes from the kubelet only: the operator puts the status back to the
// running pod's, the Workload keeps its admission, and it is Finished once
// the pod ends. (The admission policy config/policy/lmevaljob_driver_status.yaml
// refuses such a write outright; this control plane has none installed, so
// this is the operator's own defence.)
func TestForgedEndKeepsTheQuota(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "kueue-forged")
	flavor(t, "default-flavor", nil)
	job := createJob(t, ns, nil)
	admit(t, workload(t, job, "the job's Workload", exists), "default-flavor")
	job = waitJob(t, job, lmv1alpha1.JobStateScheduled, "")
	runPod(t, job)
	job = waitJob(t, job, lmv1alpha1.JobStateRunning, "")
	running := pod(t, job)

	// The driver's token, as the pod holds it.
	sa := lmeval.NamesOf(job.Name).ServiceAccount
	tok, err := kubernetes.NewForConfigOrDie(restCfg).CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	driver := rest.AnonymousClientConfig(restCfg)
	driver.BearerToken = tok.Status.Token
	dc, err := client.New(driver, client.Options{Scheme: operator.Scheme()})
	require.NoError(t, err)
	forged := fmt.Sprintf(`{"status":{"state":"Complete","reason":"Succeeded","message":"job completed","completeTime":%q}}`, time.Now().UTC().Format(time.RFC3339))
	require.NoError(t, dc.Status().Patch(ctx, job.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(forged))), "the driver may patch its job's status (RBAC cannot limit fields)")

	job = waitJob(t, job, lmv1alpha1.JobStateRunning, lmv1alpha1.ReasonNone)
	assert.Nil(t, job.Status.CompleteTime, "the forged completeTime is gone")
	wl := workload(t, job, "the Workload still admitted", hasCondition("Admitted", metav1.ConditionTrue, ""))
	for _, c := range conditions(t, wl) {
		if c.Type == "Finished" && c.Status == metav1.ConditionTrue {
			t.Fatalf("the Workload was marked Finished while the pod runs: %+v", c)
		}
	}
	p := pod(t, job)
	assert.Equal(t, running.UID, p.UID, "the same pod")
	assert.Nil(t, p.DeletionTimestamp, "the running pod is not deleted")

	// The kubelet's end finishes the Workload.
	finishPod(t, job)
	waitJob(t, job, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	workload(t, job, "the Workload Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded"))
}
