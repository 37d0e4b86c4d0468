package release

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// defaultSweepPeriod is how often release records are checked for CRs that
// no longer exist.
const defaultSweepPeriod = 10 * time.Minute

// releaseSweeper deletes the Helm release records (ConfigMaps in the
// operator's namespace) whose CR no longer exists, by UID: a CR whose
// finalizer was removed by hand, or that was deleted while the operator was
// not running, would otherwise leave its records forever. The leader runs
// it, at start and every period.
type releaseSweeper struct {
	client    client.Client // CRs from the cache; ConfigMaps go to the API server
	reader    client.Reader // the API server, for the objects kinds write outside Helm (never cached)
	namespace string
	kinds     map[string]Registered
	// outside are the kinds' OutsideTypes, sorted; watched the namespaces
	// the operator serves (nil: all).
	outside []schema.GroupVersionKind
	watched []string
	period  time.Duration
}

// NewSweeper returns the runnable that deletes the release records (in the
// operator's namespace) of the kinds' CRs that no longer exist, at start and
// every period (10 minutes when 0).
//
// It deletes, the same way, the objects a kind writes for a CR outside Helm
// (Meta.OutsideTypes: TrustyAI's proxy ClusterRoleBindings, an EvalHub's
// grants in its tenants): labelled with the operator's label and their CR's
// kind, namespace and UID, read from the API server (reader) across the
// cluster, or in the watched namespaces (nil: all) where the operator may
// not list across it; and, for a Reacher, a live CR's objects in namespaces
// it no longer reaches.
func NewSweeper(c client.Client, reader client.Reader, namespace string, kinds []Registered, watched []string, period time.Duration) manager.Runnable {
	s := &releaseSweeper{client: c, reader: reader, namespace: namespace, kinds: map[string]Registered{}, watched: watched, period: period}
	if s.period <= 0 {
		s.period = defaultSweepPeriod
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, k := range kinds {
		s.kinds[k.Meta().GVK.Kind] = k
		for _, gvk := range k.Meta().OutsideTypes {
			if !seen[gvk] {
				seen[gvk] = true
				s.outside = append(s.outside, gvk)
			}
		}
	}
	slices.SortFunc(s.outside, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return s
}

var _ manager.LeaderElectionRunnable = (*releaseSweeper)(nil)

func (s *releaseSweeper) NeedLeaderElection() bool { return true }

func (s *releaseSweeper) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("release-sweep")
	t := time.NewTicker(s.period)
	defer t.Stop()
	for {
		if n, err := s.sweep(ctx); err != nil {
			log.Error(err, "sweep release records")
		} else if n > 0 {
			log.Info("deleted release records and objects of CRs that no longer exist or no longer reach their namespace", "objects", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// outsideObjects lists the objects of one of the kinds' OutsideTypes that
// carry the operator's label and an owner's kind and UID.
func (s *releaseSweeper) outsideObjects(ctx context.Context, gvk schema.GroupVersionKind) ([]client.Object, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	selector := []client.ListOption{client.MatchingLabels{LabelManaged: "true"}, client.HasLabels{LabelOwnerKind, LabelOwnerUID}}
	err := s.reader.List(ctx, list, selector...)
	if apierrors.IsForbidden(err) && len(s.watched) > 0 {
		// Installed for some namespaces: the objects can only be there.
		list.Items = nil
		for _, ns := range s.watched {
			l := &metav1.PartialObjectMetadataList{}
			l.SetGroupVersionKind(list.GroupVersionKind())
			if err := s.reader.List(ctx, l, append(selector, client.InNamespace(ns))...); err != nil {
				return nil, fmt.Errorf("list the operator's %s in %s: %w", gvk.Kind, ns, err)
			}
			list.Items = append(list.Items, l.Items...)
		}
	} else if err != nil {
		return nil, fmt.Errorf("list the operator's %s: %w", gvk.Kind, err)
	}
	out := make([]client.Object, 0, len(list.Items))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(gvk)
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// sweep deletes the records and outside objects of CRs that no longer
// exist, and a Reacher's objects in namespaces its CR no longer reaches;
// it returns how many.
func (s *releaseSweeper) sweep(ctx context.Context) (int, error) {
	records := &corev1.ConfigMapList{}
	if err := s.client.List(ctx, records, client.InNamespace(s.namespace), client.MatchingLabels{"owner": "helm", LabelManaged: "true"}); err != nil {
		return 0, fmt.Errorf("list release records: %w", err)
	}
	var leftovers []client.Object
	for i := range records.Items {
		leftovers = append(leftovers, &records.Items[i])
	}
	if s.reader != nil {
		for _, gvk := range s.outside {
			objs, err := s.outsideObjects(ctx, gvk)
			if err != nil {
				return 0, err
			}
			leftovers = append(leftovers, objs...)
		}
	}
	live := map[string]map[string]client.Object{} // kind/namespace -> UID -> CR
	reach := map[string]map[string]bool{}         // CR UID -> namespaces it reaches
	done := map[types.UID]bool{}
	deleted := 0
	for _, obj := range leftovers {
		if done[obj.GetUID()] {
			continue // a record is also a ConfigMap of the operator's
		}
		done[obj.GetUID()] = true
		l := obj.GetLabels()
		kind, ns, uid := l[LabelOwnerKind], l[LabelOwnerNamespace], l[LabelOwnerUID]
		k, ok := s.kinds[kind]
		if !ok || ns == "" || uid == "" {
			continue
		}
		key := kind + "/" + ns
		if live[key] == nil {
			crs, err := s.crs(ctx, k, ns)
			if err != nil {
				return deleted, err
			}
			live[key] = crs
		}
		if cr, ok := live[key][uid]; ok {
			if obj.GetNamespace() == "" || obj.GetNamespace() == ns || obj.GetNamespace() == s.namespace {
				continue
			}
			if reach[uid] == nil {
				namespaces, ok, err := k.Reaches(ctx, cr)
				if err != nil {
					return deleted, fmt.Errorf("the namespaces %s %s/%s reaches: %w", kind, ns, cr.GetName(), err)
				}
				reach[uid] = map[string]bool{}
				if !ok {
					reach[uid] = nil // no Reacher: its objects stay where they are
				}
				for _, n := range namespaces {
					reach[uid][n] = true
				}
			}
			if reach[uid] == nil || reach[uid][obj.GetNamespace()] {
				continue
			}
		}
		objUID := obj.GetUID()
		if err := s.client.Delete(ctx, obj, client.Preconditions{UID: &objUID}); client.IgnoreNotFound(err) != nil {
			return deleted, fmt.Errorf("delete %s %s/%s of a CR that is gone or no longer reaches it: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName(), err)
		}
		deleted++
	}
	return deleted, nil
}

// crs are the kind's CRs in namespace ns, by UID (from the cache).
func (s *releaseSweeper) crs(ctx context.Context, k Registered, ns string) (map[string]client.Object, error) {
	list := k.Meta().NewList()
	if err := s.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", k.Meta().GVK.Kind, ns, err)
	}
	out := map[string]client.Object{}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			out[string(obj.GetUID())] = obj
		}
		return nil
	})
	return out, err
}
