package release

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// namespaceWatches watches, as metadata, the objects of APIs that a kind's
// CRs act on (Meta.NamespaceWatches: KServe's InferenceServices for
// TrustyAIService): a change reconciles every CR of the kind in the object's
// namespace. An API that is not served at start is watched as soon as it is
// (checked every capability TTL), without a restart.
type namespaceWatches struct {
	ctrl   controller.Controller
	mgr    ctrl.Manager
	r      *Reconciler
	gvks   []schema.GroupVersionKind
	caps   func() (Capabilities, error)
	period time.Duration

	mu       sync.Mutex
	watching map[schema.GroupVersionKind]bool
}

var _ manager.LeaderElectionRunnable = (*namespaceWatches)(nil)

func (w *namespaceWatches) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it looks for the APIs until ctx ends.
func (w *namespaceWatches) Start(ctx context.Context) error {
	t := time.NewTicker(w.period)
	defer t.Stop()
	for {
		if err := w.startServed(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "start watches of optional APIs")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// startServed starts the watch of every API that is served and not watched yet.
func (w *namespaceWatches) startServed(ctx context.Context) error {
	caps, err := w.caps()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gvk := range w.gvks {
		if w.watching[gvk] || !caps.Has(gvk) {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		if err := w.ctrl.Watch(source.Kind(w.mgr.GetCache(), client.Object(obj), handler.EnqueueRequestsFromMapFunc(w.r.namespaceCRs))); err != nil {
			return fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
		w.watching[gvk] = true
		ctrl.LoggerFrom(ctx).Info("watching an optional API", "kind", gvk.Kind, "group", gvk.Group)
	}
	return nil
}

// namespaceCRs maps an object to every CR of the kind in its namespace.
func (r *Reconciler) namespaceCRs(ctx context.Context, obj client.Object) []reconcile.Request {
	list := r.meta.NewList()
	if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list CRs of a namespace", "namespace", obj.GetNamespace())
		return nil
	}
	return requestsOf(list)
}
