package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
)

// runJobs is the bench of LMEvalJob (-kind=LMEvalJob), a run-to-completion
// kind: -crs jobs are created 8 at a time; the bench plays the kubelet (each
// pod, once it exists, ends Succeeded with the driver's termination
// message, 16 at a time); it measures the time until every job is Complete
// (jobs per minute), the operator's writes and reads per job, its writes and
// reads in the idle window after, and its RSS.
func runJobs(o options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lc, err := localcluster.Start(ctx, localcluster.Options{
		Dir: filepath.Join(dir, "cluster"), WithoutWorkloads: true,
		CRDDirs: []string{filepath.Join(o.root, "config", "crd", "bases")},
	})
	if err != nil {
		return err
	}
	defer lc.Stop() //nolint:errcheck
	c, err := client.New(lc.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	for _, ns := range []string{"ai-stack-operator-system", "bench"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	mgr, metricsURL, err := startOperator(o, dir, lc.Kubeconfig, "--serve-lmevaljob")
	if err != nil {
		return err
	}
	defer func() { _ = mgr.Process.Kill(); _, _ = mgr.Process.Wait() }()
	job := func(i int) *lmv1alpha1.LMEvalJob {
		return &lmv1alpha1.LMEvalJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("job-%04d", i)},
			Spec: lmv1alpha1.LMEvalJobSpec{Model: "hf", ModelArgs: []lmv1alpha1.Arg{{Name: "pretrained", Value: "EleutherAI/pythia-70m"}},
				TaskList: lmv1alpha1.TaskList{TaskNames: []string{"unfair_tos"}}, Limit: "5"},
		}
	}
	// Warm-up: one job to Complete, so that the figures leave out the
	// process's first reconcile.
	warm := job(9999)
	if err := c.Create(ctx, warm); err != nil {
		return err
	}
	if err := completeJobs(ctx, c, []string{warm.Name}); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	w0, r0, err := writesAndReads(metricsURL)
	if err != nil {
		return err
	}
	names := make([]string, o.crs)
	for i := range names {
		names[i] = job(i).Name
	}
	start := time.Now()
	if err := parallel(o.crs, 8, func(i int) error { return c.Create(ctx, job(i)) }); err != nil {
		return err
	}
	if err := completeJobs(ctx, c, names); err != nil {
		return err
	}
	took := time.Since(start)
	time.Sleep(5 * time.Second) // the last status writes and events
	w1, r1, err := writesAndReads(metricsURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: %d jobs Complete in %s; idling %s\n", o.crs, took.Round(time.Millisecond), o.idle)
	time.Sleep(o.idle)
	w2, r2, err := writesAndReads(metricsURL)
	if err != nil {
		return err
	}
	rss, err := chaos.RSS(mgr.Process.Pid)
	if err != nil {
		return err
	}
	// Objects per job: pod, driver ServiceAccount, Role, RoleBinding.
	const objects = 4
	perJob := float64(w1-w0) / float64(o.crs)
	printTable([]row{
		{fmt.Sprintf("%d new LMEvalJobs -> Complete (the bench ends each pod as the kubelet would)", o.crs), took.Round(time.Millisecond).String(), "", ""},
		{"jobs per minute to Complete", fmt.Sprintf("%.0f", float64(o.crs)/took.Minutes()), "", ""},
		{"writes per job (events included)", fmt.Sprintf("%.2f (%d objects)", perJob, objects), fmt.Sprintf("<= %d (objects + 3)", objects+3), verdict(perJob <= objects+3)},
		{"reads per job (watches aside)", fmt.Sprintf("%.1f", float64(r1-r0)/float64(o.crs)), "", ""},
		{fmt.Sprintf("writes in %s idle, %d finished jobs", o.idle, o.crs), strconv.Itoa(w2 - w1), "0", verdict(w2 == w1)},
		{fmt.Sprintf("reads in %s idle", o.idle), strconv.Itoa(r2 - r1), "0", verdict(r2 == r1)},
		{fmt.Sprintf("RSS, %d finished jobs idle", o.crs), mib(rss), "<= 70 MiB", verdict(rss <= 70<<20)},
	})
	return nil
}

// completeJobs ends each job's pod as the kubelet would once it exists
// (Succeeded, the driver's termination message) and waits until every job
// is Complete.
func completeJobs(ctx context.Context, c client.Client, names []string) error {
	return parallel(len(names), 16, func(i int) error {
		name := names[i]
		if err := waitForEvery(5*time.Minute, 20*time.Millisecond, func() error {
			pod := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: name}, pod); err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodSucceeded
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: lmeval.ContainerMain, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: `{"state":"Complete","reason":"Succeeded","message":"job completed"}`,
			}}}}
			return c.Status().Update(ctx, pod)
		}); err != nil {
			return fmt.Errorf("the pod of %s: %w", name, err)
		}
		return waitForEvery(5*time.Minute, 20*time.Millisecond, func() error {
			j := &lmv1alpha1.LMEvalJob{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: name}, j); err != nil {
				return err
			}
			if j.Status.State != lmv1alpha1.JobStateComplete || j.Status.CompleteTime == nil {
				return fmt.Errorf("%s: %s", name, j.Status.State)
			}
			return nil
		})
	})
}

// writesAndReads are the operator's writes and GETs so far (its metrics).
func writesAndReads(metricsURL string) (int, int, error) {
	w, err := writes(metricsURL)
	if err != nil {
		return 0, 0, err
	}
	r, err := requests(metricsURL, "GET")
	return w, r, err
}
