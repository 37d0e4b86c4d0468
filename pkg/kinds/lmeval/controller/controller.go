// Package controller runs LMEvalJobs to completion: the thin wiring of
// pkg/kinds/lmeval's state machine to the API server. Each reconcile reads
// the job, its pod (from a cache of the operator's pods) and the settings,
// asks lmeval.Decide what to do, renders the job's chart once when a pod is
// due, creates its objects owned by the job (garbage collected with it),
// deletes the pod when the job is cancelled, suspended or re-run, and writes
// the status when it changed. It never execs into a pod: the driver reports
// through the job's status and the pod's termination message.
//
// RBAC: rbac.go.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// UpstreamFinalizer is the finalizer upstream's operator puts on jobs. This
// operator needs none (the pod and the rest are owned by the job), and
// removes upstream's from a job being deleted, so that a job made under the
// upstream operator is not stuck after a switch.
const UpstreamFinalizer = "trustyai.opendatahub.io/lmes-finalizer"

// UpstreamConfigMap is the trustyai-service-operator's settings ConfigMap.
const UpstreamConfigMap = "trustyai-service-operator-config"

// Reconciler runs LMEvalJobs.
type Reconciler struct {
	release.Deps
	// DriverImage is the default lmes-driver-image (the operator's image).
	DriverImage string
	Chart       *charts.Chart
	// Kueue admits jobs labelled for a queue (nil: none do).
	Kueue *Kueue
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// PodCacheLabels select the pods the operator's cache holds: its own.
var PodCacheLabels = map[string]string{release.LabelManaged: "true"}

// SetupWithManager watches jobs and their pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("lmevaljob").
		For(&lmv1alpha1.LMEvalJob{}).
		Owns(&corev1.Pod{}).
		Build(r)
	if err != nil {
		return err
	}
	if r.Kueue != nil {
		// Kueue's Workloads are watched once a queued job meets them.
		r.Kueue.ctrl = c
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &lmv1alpha1.LMEvalJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if job.DeletionTimestamp != nil {
		if controllerutil.ContainsFinalizer(job, UpstreamFinalizer) {
			patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
			controllerutil.RemoveFinalizer(job, UpstreamFinalizer)
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, job, patch))
		}
		return ctrl.Result{}, nil
	}
	s, invalidReason, invalidMessage, err := r.settings(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: job.Namespace, Name: lmeval.NamesOf(job.Name).Pod}
	err = r.Client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) && (job.Status.State == lmv1alpha1.JobStateScheduled || job.Status.State == lmv1alpha1.JobStateRunning) {
		// A job that should have a pod and has none is failed: the cache
		// may not have seen a pod just created (a resume), so the API
		// server confirms first.
		err = r.APIReader.Get(ctx, key, pod)
	}
	switch {
	case err != nil:
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		pod = nil
	case !metav1.IsControlledBy(pod, job):
		pod = nil // not this job's: never touched
	case job.Status.State == lmv1alpha1.JobStateComplete && lmeval.Live(lmeval.ObservePod(pod)):
		// A Complete job whose pod runs: the state machine takes the pod's
		// word over the status, so the API server confirms the pod first
		// (the cache may not have seen the deletion of a pod the operator
		// ended, or its end).
		if err := r.APIReader.Get(ctx, key, pod); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			pod = nil
		}
	}
	permits := lmeval.PermitsFor(&job.Spec, s)
	queue, wl, err := r.queue(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if queue != nil {
		if queue, wl, err = r.syncWorkload(ctx, job, queue, wl, pod, s, permits); err != nil {
			return ctrl.Result{}, err
		}
	}
	plan := lmeval.Decide(lmeval.Input{
		Job: job, Pod: lmeval.ObservePod(pod),
		InvalidReason: invalidReason, InvalidMessage: invalidMessage, Permits: permits,
		// A job labelled for Kueue: Kueue's admission decides where Kueue
		// is served; elsewhere it runs as under upstream's operator without
		// its JOB_MGR service, which ignores spec.suspend.
		SuspendHonored: lmeval.QueueName(job) == "",
		Queue:          queue,
		Now:            r.now(),
	})
	if plan.DeletePod && pod != nil {
		uid := pod.UID
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete the pod of LMEvalJob %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
	if plan.Create {
		place, err := r.placement(ctx, queue)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.create(ctx, job, s, permits, place); err != nil {
			var taken *nameTaken
			if !errors.As(err, &taken) {
				return ctrl.Result{}, err
			}
			plan.Status.State, plan.Status.Reason, plan.Status.Message = lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonFailed, taken.Error()
			now := metav1.NewTime(r.now())
			plan.Status.CompleteTime = &now
		}
	}
	if !equality.Semantic.DeepEqual(job.Status, plan.Status) {
		job.Status = plan.Status
		if err := r.Client.Status().Update(ctx, job); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // a rate-limited requeue: RequeueAfter would be a fixed delay (controller-runtime keeps Requeue until v1)
			}
			return ctrl.Result{}, err
		}
	}
	for _, e := range plan.Events {
		r.Recorder.Event(job, e.Type, e.Reason, e.Message)
	}
	if err := r.finishWorkload(ctx, job, lmeval.ObservePod(pod), queue, wl); err != nil {
		return ctrl.Result{}, err
	}
	if invalidReason == lmeval.ReasonInvalidOperatorSettings {
		// The settings ConfigMaps are not watched yet: look again.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	// The pod watch sees every change of a running job: no polling.
	return ctrl.Result{}, nil
}

// settings reads the operator settings for the job and checks the job.
func (r *Reconciler) settings(ctx context.Context, job *lmv1alpha1.LMEvalJob) (lmeval.Settings, string, string, error) {
	data, err := r.SettingsData(ctx)
	if err != nil {
		return lmeval.Settings{}, "", "", err
	}
	upstream, err := r.OperatorConfigMapData(ctx, UpstreamConfigMap)
	if err != nil {
		return lmeval.Settings{}, "", "", err
	}
	dsc, err := r.OperatorConfigMapData(ctx, lmeval.DSCConfigMap)
	if err != nil {
		return lmeval.Settings{}, "", "", err
	}
	s, err := lmeval.ParseSettings(r.Env(), data, upstream, dsc, r.DriverImage)
	if err != nil {
		var f *status.Failure
		if errors.As(err, &f) {
			return s, lmeval.ReasonInvalidOperatorSettings, fmt.Sprintf("%s: %s", f.Field, f.Message), nil
		}
		return s, lmeval.ReasonInvalidOperatorSettings, err.Error(), nil
	}
	if msg := lmeval.Validate(&job.Spec); msg != "" {
		return s, lmeval.ReasonInvalidSpec, msg, nil
	}
	return s, "", "", nil
}

// nameTaken: an object the job needs exists and is not the job's.
type nameTaken struct{ kind, name string }

func (e *nameTaken) Error() string {
	return fmt.Sprintf("a %s named %s exists and is not this job's: delete or rename it, then edit the job", e.kind, e.name)
}

// create renders the job's chart and creates its objects, owned by the job.
func (r *Reconciler) create(ctx context.Context, job *lmv1alpha1.LMEvalJob, s lmeval.Settings, p lmeval.Permits, place *lmeval.Placement) error {
	ca, err := r.caBundle(ctx, job)
	if err != nil {
		return err
	}
	vals, err := lmeval.Values(job, s, p, PodCacheLabels, ca, place)
	if err != nil {
		return err
	}
	manifest, err := render.Render(r.Chart.Chart, vals, render.Options{ReleaseName: job.Name, Namespace: job.Namespace})
	if err != nil {
		return fmt.Errorf("render LMEvalJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	if _, err := guard.Check(manifest, guard.Policy{Namespace: job.Namespace, Kinds: r.Chart.Kinds}); err != nil {
		return err
	}
	owner := metav1.NewControllerRef(job, lmv1alpha1.GroupVersion.WithKind(lmv1alpha1.Kind))
	// The pod last: it mounts the PVC and runs as the ServiceAccount.
	docs := guard.Documents(manifest)
	var pod *unstructured.Unstructured
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(job.Namespace)
		u.SetOwnerReferences([]metav1.OwnerReference{*owner})
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range PodCacheLabels {
			labels[k] = v
		}
		u.SetLabels(labels)
		if u.GetKind() == "Pod" {
			pod = u
			continue
		}
		if err := r.createOne(ctx, job, u); err != nil {
			return err
		}
	}
	if pod == nil {
		return errors.New("the lmeval-job chart rendered no pod")
	}
	return r.createOne(ctx, job, pod)
}

// caBundle merges the job namespace's trusted CA bundle and service CA when
// the job reaches its model over https ("" otherwise, or when neither
// exists), as upstream does.
func (r *Reconciler) caBundle(ctx context.Context, job *lmv1alpha1.LMEvalJob) (string, error) {
	if !lmeval.NeedsCABundle(&job.Spec) {
		return "", nil
	}
	trusted, err := release.GetOptional(ctx, r.APIReader, job.Namespace, lmeval.TrustedCABundle, &corev1.ConfigMap{})
	if err != nil {
		return "", err
	}
	service, err := release.GetOptional(ctx, r.APIReader, job.Namespace, lmeval.ServiceCA, &corev1.ConfigMap{})
	if err != nil {
		return "", err
	}
	var sources []string
	if trusted != nil {
		for _, k := range lmeval.TrustedCAKeys {
			sources = append(sources, trusted.Data[k])
		}
	}
	if service != nil {
		sources = append(sources, service.Data[lmeval.ServiceCAKey])
	}
	return lmeval.MergeCABundle(sources...), nil
}

// createOne creates an object; one that exists is accepted when the job
// owns it (a re-run, a resumed job), refused otherwise.
func (r *Reconciler) createOne(ctx context.Context, job *lmv1alpha1.LMEvalJob, u *unstructured.Unstructured) error {
	err := r.Client.Create(ctx, u)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &metav1.PartialObjectMetadata{}
	existing.SetGroupVersionKind(u.GroupVersionKind())
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(u), existing); err != nil {
		return err
	}
	if !metav1.IsControlledBy(existing, job) {
		return &nameTaken{kind: u.GetKind(), name: u.GetName()}
	}
	return nil
}
