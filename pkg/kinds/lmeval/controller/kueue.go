package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// Kueue is the reconciler's view of Kueue: whether the cluster serves its
// Workload API (detected with a TTL, so that Kueue installed later is
// found), and the watch of the operator's Workloads, started the first
// time a queued job meets a cluster that serves them.
type Kueue struct {
	// Served tells which optional APIs the cluster serves (Kueue's
	// Workload at each of lmeval.KueueVersions).
	Served func() (release.Capabilities, error)
	// NewCache makes the cache of the operator's Workloads (its label
	// only), and Add starts it with the manager: made only once Kueue is
	// found, as a cache cannot be set up for an API the cluster lacks.
	NewCache func() (cache.Cache, error)
	Add      func(manager.Runnable) error
	// Mapper maps the Workloads' owner kind.
	Mapper meta.RESTMapper

	mu    sync.Mutex
	cache cache.Cache
	ctrl  controller.Controller
	// version is the version of Kueue's API spoken, from the first time
	// it was found.
	version string
}

// KueueAPIs are the optional APIs the Kueue integration detects.
func KueueAPIs() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, v := range lmeval.KueueVersions {
		out = append(out, lmeval.KueueGVK(v, "Workload"))
	}
	return out
}

// newObject is an empty object of a Kueue kind at the version.
func newObject(version, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(lmeval.KueueGVK(version, kind))
	return u
}

// queue returns the job's Queue: nil when the job is not labelled for a
// queue or the cluster does not serve Kueue's Workloads.
func (r *Reconciler) queue(ctx context.Context, job *lmv1alpha1.LMEvalJob) (*lmeval.Queue, *unstructured.Unstructured, error) {
	name := lmeval.QueueName(job)
	if name == "" || r.Kueue == nil || r.Kueue.Served == nil {
		return nil, nil, nil
	}
	caps, err := r.Kueue.Served()
	if err != nil {
		return nil, nil, err
	}
	version := ""
	for _, v := range lmeval.KueueVersions {
		if caps.Has(lmeval.KueueGVK(v, "Workload")) {
			version = v
			break
		}
	}
	if version == "" {
		return nil, nil, nil
	}
	workloads, version, err := r.Kueue.watch(ctx, r.Client.Scheme(), version)
	if err != nil {
		return nil, nil, err
	}
	wl := newObject(version, "Workload")
	err = workloads.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: lmeval.WorkloadName(job.Name, string(job.UID))}, wl)
	switch {
	case apierrors.IsNotFound(err):
		wl = nil
	case err != nil:
		return nil, nil, err
	case !metav1.IsControlledBy(wl, job):
		return &lmeval.Queue{Name: name, Problem: notOurs(wl.GetName())}, nil, nil
	}
	a, err := lmeval.ObserveWorkload(wl)
	if err != nil {
		return nil, nil, err
	}
	return &lmeval.Queue{Name: name, Admission: a}, wl, nil
}

// watch starts the cache and the watch of the operator's Workloads once,
// at the version found first, and returns the cache and that version.
func (k *Kueue) watch(ctx context.Context, scheme *runtime.Scheme, version string) (client.Reader, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cache != nil {
		return k.cache, k.version, nil
	}
	if k.ctrl == nil {
		return nil, "", errors.New("the LMEvalJob controller is not set up")
	}
	c, err := k.NewCache()
	if err != nil {
		return nil, "", fmt.Errorf("cache Kueue's Workloads: %w", err)
	}
	if err := k.Add(c); err != nil {
		return nil, "", err
	}
	src := source.Kind(c, client.Object(newObject(version, "Workload")),
		handler.EnqueueRequestForOwner(scheme, k.Mapper, &lmv1alpha1.LMEvalJob{}, handler.OnlyControllerOwner()))
	if err := k.ctrl.Watch(src); err != nil {
		return nil, "", fmt.Errorf("watch Kueue's Workloads: %w", err)
	}
	if !c.WaitForCacheSync(ctx) {
		return nil, "", errors.New("the cache of Kueue's Workloads did not sync")
	}
	k.cache, k.version = c, version
	return c, version, nil
}

// syncWorkload makes the queued job's Workload when it has none (and is
// not finished), replaces a finished one made for an earlier spec (a
// re-run), and hands an evicted Workload's quota back once the pod is gone.
func (r *Reconciler) syncWorkload(ctx context.Context, job *lmv1alpha1.LMEvalJob, q *lmeval.Queue, wl *unstructured.Unstructured, pod *corev1.Pod, s lmeval.Settings, p lmeval.Permits) (*lmeval.Queue, *unstructured.Unstructured, error) {
	finished := job.Status.State == lmv1alpha1.JobStateComplete && job.Status.CompleteTime != nil
	a := q.Admission
	switch {
	case finished && wl == nil:
		// Finished without a Workload (finished before it was queued, or
		// Kueue's retention deleted it): nothing to admit.
		return nil, nil, nil
	case finished:
		return q, wl, nil
	case a != nil && a.Finished && a.SpecHash != lmeval.SpecHash(&job.Spec):
		// A re-run: the last run's Workload is finished; a new one queues.
		uid := wl.GetUID()
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return nil, nil, fmt.Errorf("delete the finished Workload %s: %w", wl.GetName(), err)
		}
		q.Admission = nil
		return q, nil, nil
	case wl == nil:
		prio, problem, err := r.priority(ctx, job)
		if err != nil {
			return nil, nil, err
		}
		if problem != "" {
			q.Problem = problem
			return q, nil, nil
		}
		u, err := lmeval.Workload(job, r.Kueue.version, lmeval.PodSpec(job, s, p, false), prio, PodCacheLabels)
		if err != nil {
			return nil, nil, err
		}
		u.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(job, lmv1alpha1.GroupVersion.WithKind(lmv1alpha1.Kind))})
		err = r.Client.Create(ctx, u)
		switch {
		case err == nil:
		case apierrors.IsAlreadyExists(err):
			// Ours, not in the cache yet; or another's of that name (the
			// cache holds only the operator's).
			existing := &metav1.PartialObjectMetadata{}
			existing.SetGroupVersionKind(u.GroupVersionKind())
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(u), existing); err != nil {
				return nil, nil, client.IgnoreNotFound(err)
			}
			if !metav1.IsControlledBy(existing, job) {
				q.Problem = notOurs(u.GetName())
			}
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			// Kueue's validation or a policy refused it: say so on the job.
			q.Problem = fmt.Sprintf("Kueue refused the job's Workload: %v", err)
		default:
			return nil, nil, fmt.Errorf("create the Workload of LMEvalJob %s/%s: %w", job.Namespace, job.Name, err)
		}
		return q, nil, nil
	case a != nil && a.Evicted && a.Reserved && (pod == nil || !metav1.IsControlledBy(pod, job)):
		// Evicted and the pod gone: hand the quota back, so that Kueue
		// queues the Workload again.
		patch, err := a.EvictionHandled(r.now())
		if err != nil {
			return nil, nil, err
		}
		if err := r.Client.Status().Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch)); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return q, wl, nil // the watch brings the newer Workload
			}
			return nil, nil, fmt.Errorf("clear the admission of Workload %s: %w", wl.GetName(), err)
		}
	}
	return q, wl, nil
}

// notOurs is the problem of a Workload of the job's name that is not its.
func notOurs(name string) string {
	return fmt.Sprintf("a Workload named %s exists and is not this job's: delete it, and the job's own is made", name)
}

// priority is the job's WorkloadPriorityClass (KueuePriorityLabel), or a
// problem naming the label when it names none that exists.
func (r *Reconciler) priority(ctx context.Context, job *lmv1alpha1.LMEvalJob) (*lmeval.Priority, string, error) {
	name := job.Labels[lmeval.KueuePriorityLabel]
	if name == "" {
		return nil, "", nil
	}
	wpc := newObject(r.Kueue.version, "WorkloadPriorityClass")
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, wpc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("metadata.labels[%s]: no WorkloadPriorityClass %q: create it or change the label", lmeval.KueuePriorityLabel, name), nil
		}
		return nil, "", err
	}
	v, _, _ := unstructured.NestedInt64(wpc.Object, "value")
	return &lmeval.Priority{Class: name, Value: int32(v)}, "", nil //nolint:gosec // Kueue's value is an int32
}

// placement is where an admission puts the pod (nil: not queued).
func (r *Reconciler) placement(ctx context.Context, q *lmeval.Queue) (*lmeval.Placement, error) {
	if q == nil || !q.Admission.Running() {
		return nil, nil
	}
	var flavors []lmeval.Flavor
	for _, name := range q.Admission.Flavors {
		u := newObject(r.Kueue.version, "ResourceFlavor")
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, fmt.Errorf("read ResourceFlavor %s of the admission: %w", name, err)
		}
		f, err := lmeval.ObserveFlavor(u)
		if err != nil {
			return nil, err
		}
		flavors = append(flavors, f)
	}
	return lmeval.PlacementOf(q.Admission, flavors), nil
}

// finishWorkload marks a finished job's Workload Finished, which frees its
// quota: only once its pod no longer runs (lmeval.QuotaReleasable), never
// on the status alone, which the job's driver can write.
func (r *Reconciler) finishWorkload(ctx context.Context, job *lmv1alpha1.LMEvalJob, pod *lmeval.Pod, q *lmeval.Queue, wl *unstructured.Unstructured) error {
	if q == nil || wl == nil || q.Admission == nil || q.Admission.Finished || !lmeval.QuotaReleasable(&job.Status, pod) {
		return nil
	}
	patch, err := q.Admission.FinishedPatch(job.Status.Reason == lmv1alpha1.ReasonSucceeded, job.Status.Message, r.now())
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // the watch brings the newer Workload
		}
		return fmt.Errorf("mark Workload %s finished: %w", wl.GetName(), err)
	}
	return nil
}
