package release

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// namespaceWatches watches, as metadata, the objects that a kind's CRs act on
// (Meta.NamespaceWatches: KServe's InferenceServices and ModelMesh's
// Deployments for TrustyAIService): a change reconciles every CR of the kind
// in the object's namespace. An optional API that is not served at start is
// watched as soon as it is (checked every capability TTL), without a restart.
type namespaceWatches struct {
	ctrl       controller.Controller
	mgr        ctrl.Manager
	r          *Reconciler
	watches    []NamespaceWatch
	optional   map[schema.GroupVersionKind]bool
	namespaces []string
	caps       func() (Capabilities, error)
	period     time.Duration

	mu       sync.Mutex
	watching map[int]bool // index into watches
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

// modelChanged passes what can change what a CR does to an object: its
// spec (the generation), its annotations or its labels. Status updates of
// the model servers, which are most of their events, do not reconcile.
var modelChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})

// startServed starts the watch of every API that is served and not watched yet.
func (w *namespaceWatches) startServed(ctx context.Context) error {
	caps, err := w.caps()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, nw := range w.watches {
		if w.watching[i] || (w.optional[nw.GVK] && !caps.Has(nw.GVK)) {
			continue
		}
		c, err := w.cacheFor(ctx, nw)
		if err != nil {
			return err
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(nw.GVK)
		if err := w.ctrl.Watch(source.Kind(c, client.Object(obj), handler.EnqueueRequestsFromMapFunc(w.r.namespaceCRs), modelChanged)); err != nil {
			return fmt.Errorf("watch %s: %w", nw.GVK.Kind, err)
		}
		w.watching[i] = true
		ctrl.LoggerFrom(ctx).Info("watching the objects CRs act on", "kind", nw.GVK.Kind, "group", nw.GVK.Group, "labels", nw.Labels, "selector", nw.Selector)
	}
	return nil
}

// cacheFor is the manager's cache for a watch without labels, and a metadata
// cache of the watch's own, limited to its labels, for one with: it runs
// until ctx ends.
func (w *namespaceWatches) cacheFor(ctx context.Context, nw NamespaceWatch) (cache.Cache, error) {
	if len(nw.Labels) == 0 && nw.Selector == "" {
		return w.mgr.GetCache(), nil
	}
	selector := labels.SelectorFromSet(nw.Labels)
	if nw.Selector != "" {
		var err error
		if selector, err = labels.Parse(nw.Selector); err != nil {
			return nil, fmt.Errorf("watch of %s: selector %q: %w", nw.GVK.Kind, nw.Selector, err)
		}
	}
	opts := cache.Options{
		HTTPClient:           w.mgr.GetHTTPClient(),
		Scheme:               w.mgr.GetScheme(),
		Mapper:               w.mgr.GetRESTMapper(),
		DefaultLabelSelector: selector,
		DefaultTransform:     cache.TransformStripManagedFields(),
	}
	if len(w.namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range w.namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(w.mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("cache of %s labelled %v: %w", nw.GVK.Kind, selector, err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "cache of the objects CRs act on", "kind", nw.GVK.Kind)
		}
	}()
	return c, nil
}

// namespaceCRs maps an object to every CR of the kind in its namespace; a
// cluster-scoped object (a Namespace) to every CR of the kind.
func (r *Reconciler) namespaceCRs(ctx context.Context, obj client.Object) []reconcile.Request {
	list := r.meta.NewList()
	var opts []client.ListOption
	if ns := obj.GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := r.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list CRs of a namespace", "namespace", obj.GetNamespace())
		return nil
	}
	return requestsOf(list)
}

// peersOnDelete reconciles the CRs of a namespace when one of them is gone:
// the objects they act on may change hands (one CR per namespace wires the
// model servers, and the next takes over).
func (r *Reconciler) peersOnDelete() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range r.namespaceCRs(ctx, e.Object) {
				q.Add(req)
			}
		},
	}
}
