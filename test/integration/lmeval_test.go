package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/lmesdriver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// lmevalOperator runs a manager that serves LMEvalJob alone (the suite's
// manager serves the release kinds).
func lmevalOperator(t *testing.T) {
	t.Helper()
	stop := framework.RunManager(t, restConfig, func(o *operator.ManagerOptions) {
		o.Watches, o.LMEvalJobs, o.DriverImage = nil, true, "quay.io/ai-stack-operator/ai-stack-operator:test"
	})
	t.Cleanup(stop)
}

func sampleJob(t *testing.T, ns string) *lmv1alpha1.LMEvalJob {
	t.Helper()
	job := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(framework.UpstreamLMEvalJobSample), job))
	job.Namespace = ns
	require.NoError(t, k8s.Create(context.Background(), job))
	return job
}

func getJob(t *testing.T, ns, name string) *lmv1alpha1.LMEvalJob {
	t.Helper()
	job := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job))
	return job
}

func waitJob(t *testing.T, ns, name string, what string, cond func(*lmv1alpha1.LMEvalJob) error) *lmv1alpha1.LMEvalJob {
	t.Helper()
	var job *lmv1alpha1.LMEvalJob
	env.Eventually(t, what, func() error {
		job = &lmv1alpha1.LMEvalJob{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		return cond(job)
	})
	return job
}

func inState(state lmv1alpha1.JobState, reason lmv1alpha1.Reason) func(*lmv1alpha1.LMEvalJob) error {
	return func(j *lmv1alpha1.LMEvalJob) error {
		if j.Status.State != state || (reason != "" && j.Status.Reason != reason) {
			return fmt.Errorf("state %s/%s (%q)", j.Status.State, j.Status.Reason, j.Status.Message)
		}
		return nil
	}
}

// driverConfig is the API as the job's pod sees it: a token of the
// driver's ServiceAccount.
func driverConfig(t *testing.T, ns, sa string) *rest.Config {
	t.Helper()
	tok, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return &rest.Config{Host: restConfig.Host, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: restConfig.CAData}}
}

// finishPod plays the kubelet: the pod ran to its end.
func finishPod(t *testing.T, ns, name string, code int32, message string) {
	t.Helper()
	pod := &corev1.Pod{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod))
	pod.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: lmeval.ContainerMain, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message}}}}
	require.NoError(t, k8s.Status().Update(context.Background(), pod))
}

func TestLMEvalJobRunsToCompletionWithoutExec(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval")
	job := sampleJob(t, ns)
	job = waitJob(t, ns, job.Name, "the job Scheduled", inState(lmv1alpha1.JobStateScheduled, lmv1alpha1.ReasonNone))
	assert.Equal(t, job.Name, job.Status.PodName)
	assert.NotNil(t, job.Status.LastScheduleTime)

	// The pod: upstream's layout, owned by the job, the driver's ServiceAccount.
	pod := &corev1.Pod{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, pod))
	assert.True(t, metav1.IsControlledBy(pod, job))
	assert.Equal(t, job.Name+"-lmes-driver", pod.Spec.ServiceAccountName)
	assert.Equal(t, "fms-lm-eval-service", pod.Labels["app.kubernetes.io/name"], "the job's labels over upstream's, as upstream copies them")
	assert.Equal(t, "quay.io/ai-stack-operator/ai-stack-operator:test", pod.Spec.InitContainers[0].Image)
	assert.Equal(t, []string{"/bin/driver", "--copy", "/opt/app-root/src/bin/driver"}, pod.Spec.InitContainers[0].Command)
	main := pod.Spec.Containers[0]
	assert.Equal(t, "2", main.Resources.Requests.Cpu().String())
	assert.Contains(t, main.Args, "--log_samples")
	assert.Equal(t, []string{"--limit", "5"}, main.Args[slices.Index(main.Args, "--limit"):slices.Index(main.Args, "--limit")+2])

	// The driver reports through its ServiceAccount: its own job's status.
	dcfg := driverConfig(t, ns, pod.Spec.ServiceAccountName)
	report, err := lmesdriver.NewJobStatus(dcfg, ns, job.Name)
	require.NoError(t, err)
	dir := t.TempDir()
	results := filepath.Join(dir, "output", "m")
	require.NoError(t, os.MkdirAll(results, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(results, "results_1.json"), []byte(`{"results":{"unfair_tos":{"acc":0.4}}}`), 0o644))
	d := lmesdriver.New(lmesdriver.Options{
		OutputPath: filepath.Join(dir, "output"), TaskRecipesPath: dir, CatalogPath: filepath.Join(dir, "cat"),
		Args:              []string{"sh", "-c", `printf 'Running loglikelihood requests: 100%%|#| 5/5 [00:01<00:00, 4.9it/s]\n' >&2`},
		Reporters:         []lmesdriver.Reporter{report, lmesdriver.Termination{Path: filepath.Join(dir, "termination-log")}},
		MinReportInterval: time.Millisecond, Log: os.Stderr,
	})
	require.NoError(t, d.Run(context.Background()))
	job = waitJob(t, ns, job.Name, "the driver's results in status", func(j *lmv1alpha1.LMEvalJob) error {
		if j.Status.Results == "" {
			return errors.New("no results")
		}
		return nil
	})
	assert.Equal(t, `{"results":{"unfair_tos":{"acc":0.4}}}`, job.Status.Results)
	require.Len(t, job.Status.ProgressBars, 1)
	assert.Equal(t, "5/5", job.Status.ProgressBars[0].Count)
	assert.Nil(t, job.Status.CompleteTime, "not complete before the pod ends")

	// That token reaches nothing else: not the job itself, not another job's status.
	other := sampleJob(t, ns)
	denied, err := lmesdriver.NewJobStatus(dcfg, ns, other.Name)
	require.NoError(t, err)
	err = denied.Report(context.Background(), lmesdriver.Status{State: lmv1alpha1.JobStateComplete, Reason: lmv1alpha1.ReasonSucceeded})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(errors.Unwrap(err)), err.Error())
	dc, err := client.New(dcfg, client.Options{Scheme: operator.Scheme()})
	require.NoError(t, err)
	err = dc.Patch(context.Background(), getJob(t, ns, job.Name), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"limit":"6"}}`)))
	assert.True(t, apierrors.IsForbidden(err), "the driver may not write the job's spec: %v", err)
	assert.True(t, apierrors.IsForbidden(dc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, &corev1.Pod{})))

	// The kubelet reports the end: Complete, the driver's results kept.
	term, err := os.ReadFile(filepath.Join(dir, "termination-log"))
	require.NoError(t, err)
	finishPod(t, ns, job.Name, 0, string(term))
	job = waitJob(t, ns, job.Name, "the job Complete with its completeTime", func(j *lmv1alpha1.LMEvalJob) error {
		if err := inState(lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)(j); err != nil || j.Status.CompleteTime == nil {
			return fmt.Errorf("%v, completeTime %v", err, j.Status.CompleteTime) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		return nil
	})
	assert.Equal(t, `{"results":{"unfair_tos":{"acc":0.4}}}`, job.Status.Results)
	env.Eventually(t, "JobCompleted event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventJobCompleted) })
	assert.Contains(t, env.EventReasons(t, ns, job.Name), lmeval.EventPodCreation)

	// Not run again: the finished pod is the only one.
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, pod))
	assert.Equal(t, corev1.PodSucceeded, pod.Status.Phase)
	role := &rbacv1.Role{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name + "-lmes-driver"}, role))
	assert.Equal(t, []string{job.Name}, role.Rules[0].ResourceNames)
}

func TestLMEvalJobFailureFromTheTerminationMessage(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-fail")
	job := sampleJob(t, ns)
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	finishPod(t, ns, job.Name, 1, `{"state":"Complete","reason":"Failed","message":"exit status 3"}`)
	job = waitJob(t, ns, job.Name, "Failed", inState(lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonFailed))
	assert.Equal(t, "exit status 3", job.Status.Message)
}

func TestLMEvalJobCancel(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-cancel")
	job := sampleJob(t, ns)
	job = waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	// Upstream's way: a write of status.state.
	env.UpdateStatus(t, job, func() { job.Status.State = lmv1alpha1.JobStateCancelled })
	job = waitJob(t, ns, job.Name, "Cancelled", inState(lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonCancelled))
	assert.NotNil(t, job.Status.CompleteTime)
	env.Eventually(t, "the pod deleted", env.GoneFrom(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}))
	env.Eventually(t, "Cancelled event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventCancelled) })
}

func TestLMEvalJobSuspendAndResume(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-suspend")
	job := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(framework.UpstreamLMEvalJobSample), job))
	job.Namespace, job.Labels = ns, nil // not queued for Kueue: suspend is honoured
	require.NoError(t, k8s.Create(context.Background(), job))
	waitJob(t, ns, job.Name, "Suspended", inState(lmv1alpha1.JobStateSuspended, ""))
	assert.True(t, apierrors.IsNotFound(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, &corev1.Pod{})), "no pod while suspended")

	setSuspend := func(v bool) {
		patchObject(t, ns, job.Name, &lmv1alpha1.LMEvalJob{}, func(j *lmv1alpha1.LMEvalJob) { j.Spec.Suspend = v })
	}
	setSuspend(false)
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	setSuspend(true)
	waitJob(t, ns, job.Name, "Suspended again", inState(lmv1alpha1.JobStateSuspended, ""))
	env.Eventually(t, "the pod deleted", env.GoneFrom(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}))
	setSuspend(false)
	waitJob(t, ns, job.Name, "Scheduled after resume", inState(lmv1alpha1.JobStateScheduled, ""))
	env.Eventually(t, "Resumed event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventResumed) })
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, &corev1.Pod{}))
}

func TestLMEvalJobPodDeletedIsAFailureNotARerun(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-gone")
	job := sampleJob(t, ns)
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	require.NoError(t, k8s.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name}}))
	job = waitJob(t, ns, job.Name, "Failed", inState(lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonFailed))
	assert.Contains(t, job.Status.Message, "not found")
	env.Eventually(t, "PodMissing event", func() error { return env.HasReason(t, ns, job.Name, lmeval.EventPodMissing) })
	time.Sleep(500 * time.Millisecond)
	assert.True(t, apierrors.IsNotFound(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: job.Name}, &corev1.Pod{})), "never re-created")
}

func TestLMEvalJobDeleteDropsUpstreamsFinalizer(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-delete")
	job := &lmv1alpha1.LMEvalJob{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(framework.UpstreamLMEvalJobSample), job))
	job.Namespace, job.Finalizers = ns, []string{"trustyai.opendatahub.io/lmes-finalizer"}
	require.NoError(t, k8s.Create(context.Background(), job))
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	require.NoError(t, k8s.Delete(context.Background(), job))
	env.Eventually(t, "the job gone", env.GoneFrom(job))
}

func TestLMEvalJobCABundleForHTTPSModels(t *testing.T) {
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-ca")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "odh-trusted-ca-bundle"}, Data: map[string]string{"ca-bundle.crt": "CLUSTER", "odh-ca-bundle.crt": ""}}))
	require.NoError(t, k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "openshift-service-ca.crt"}, Data: map[string]string{"service-ca.crt": "SERVICE"}}))
	job := &lmv1alpha1.LMEvalJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
		Spec: lmv1alpha1.LMEvalJobSpec{Model: "local-completions", TaskList: lmv1alpha1.TaskList{TaskNames: []string{"arc_easy"}},
			ModelArgs: []lmv1alpha1.Arg{{Name: "model", Value: "granite"}, {Name: "base_url", Value: "https://granite.models.svc:8443/v1/completions"}}},
	}
	require.NoError(t, k8s.Create(ctx, job))
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	cm := &corev1.ConfigMap{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "remote-ca-bundle"}, cm))
	assert.Equal(t, "CLUSTER\nSERVICE", cm.Data["merged-ca-bundle.crt"])
	assert.True(t, metav1.IsControlledBy(cm, getJob(t, ns, job.Name)))
	pod := &corev1.Pod{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.Name}, pod))
	var env []string
	for _, e := range pod.Spec.Containers[0].Env {
		env = append(env, e.Name+"="+e.Value)
	}
	assert.Contains(t, env, "REQUESTS_CA_BUNDLE=/etc/ssl/certs/odh-ca-bundle.crt")
}

// runPod plays the kubelet: the pod's main container runs.
func runPod(t *testing.T, ns, name string) {
	t.Helper()
	pod := &corev1.Pod{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod))
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: lmeval.ContainerMain, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	require.NoError(t, k8s.Status().Update(context.Background(), pod))
}

// With config/policy applied as documented (`kubectl apply -k
// config/policy`), a job's driver reports its progress and results, and the
// API server refuses every write of the end (state Complete or Cancelled, a
// completeTime) and of the operator's fields: the end is the kubelet's to
// report. (The second security review's finding: the driver's token, in
// every container of the pod, could end the job in its status while the
// pod ran on.)
func TestDriverMayReportButNotEndItsJob(t *testing.T) {
	ctx := context.Background()
	framework.ApplyAsDocumented(t, k8s, framework.Objects(t, framework.Kustomize(t, "config/policy")), false)
	lmevalOperator(t)
	ns := env.NewNamespace(t, "lmeval-driver-policy")
	job := sampleJob(t, ns)
	waitJob(t, ns, job.Name, "Scheduled", inState(lmv1alpha1.JobStateScheduled, ""))
	runPod(t, ns, job.Name)
	job = waitJob(t, ns, job.Name, "Running", inState(lmv1alpha1.JobStateRunning, ""))

	dcfg := driverConfig(t, ns, lmeval.NamesOf(job.Name).ServiceAccount)
	dc, err := client.New(dcfg, client.Options{Scheme: operator.Scheme()})
	require.NoError(t, err)
	patch := func(body string) error {
		return dc.Status().Patch(ctx, getJob(t, ns, job.Name), client.RawPatch(types.MergePatchType, []byte(body)))
	}
	now := time.Now().UTC().Format(time.RFC3339)
	forged := fmt.Sprintf(`{"status":{"state":"Complete","reason":"Succeeded","completeTime":%q}}`, now)
	// The policy takes a moment to load.
	env.Eventually(t, "the policy refuses the driver's end of its job", func() error {
		if err := patch(forged); err == nil {
			return errors.New("allowed")
		}
		return nil
	})
	for what, body := range map[string]string{
		"state Complete":     `{"status":{"state":"Complete","reason":"Succeeded"}}`,
		"state Cancelled":    `{"status":{"state":"Cancelled"}}`,
		"a completeTime":     fmt.Sprintf(`{"status":{"completeTime":%q}}`, now),
		"the pod's name":     `{"status":{"podName":"another"}}`,
		"the conditions":     `{"status":{"conditions":[]}}`,
		"observedGeneration": `{"status":{"observedGeneration":42}}`,
	} {
		err := patch(body)
		if assert.Error(t, err, "the driver wrote %s", what) {
			assert.True(t, apierrors.IsForbidden(err), "%s: %v", what, err)
			assert.Contains(t, err.Error(), "driver", what)
		}
	}

	// What the driver does write passes: progress, then its final report
	// (results, the state still Running; the end in the termination message).
	report, err := lmesdriver.NewJobStatus(dcfg, ns, job.Name)
	require.NoError(t, err)
	require.NoError(t, report.Report(ctx, lmesdriver.Status{State: lmv1alpha1.JobStateRunning, Reason: lmv1alpha1.ReasonNone, Message: "Running loglikelihood requests", ProgressBars: []lmv1alpha1.ProgressBar{{Message: "Running loglikelihood requests", Percent: "50%", Count: "1/2"}}}))
	final := lmesdriver.Status{State: lmv1alpha1.JobStateComplete, Reason: lmv1alpha1.ReasonSucceeded, Message: lmesdriver.MessageCompleted, Results: `{"results":{"arc_easy":{"acc":0.5}}}`}
	require.NoError(t, report.Report(ctx, final))
	job = getJob(t, ns, job.Name)
	assert.Equal(t, lmv1alpha1.JobStateRunning, job.Status.State, "the driver's report does not end the job")
	assert.Nil(t, job.Status.CompleteTime)
	assert.Equal(t, final.Results, job.Status.Results)

	// The kubelet ends it: the operator writes the end, with the results.
	term := filepath.Join(t.TempDir(), "termination-log")
	require.NoError(t, lmesdriver.Termination{Path: term}.Report(ctx, final))
	msg, err := os.ReadFile(term)
	require.NoError(t, err)
	finishPod(t, ns, job.Name, 0, string(msg))
	job = waitJob(t, ns, job.Name, "Complete", inState(lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded))
	assert.NotNil(t, job.Status.CompleteTime)
	assert.Equal(t, final.Results, job.Status.Results)
}
