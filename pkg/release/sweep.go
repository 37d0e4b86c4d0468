package release

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
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
	namespace string
	kinds     map[string]Registered
	period    time.Duration
}

// NewSweeper returns the runnable that deletes the release records (in the
// operator's namespace) of the kinds' CRs that no longer exist, at start and
// every period (10 minutes when 0).
func NewSweeper(c client.Client, namespace string, kinds []Registered, period time.Duration) manager.Runnable {
	s := &releaseSweeper{client: c, namespace: namespace, kinds: map[string]Registered{}, period: period}
	if s.period <= 0 {
		s.period = defaultSweepPeriod
	}
	for _, k := range kinds {
		s.kinds[k.Meta().GVK.Kind] = k
	}
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
			log.Info("deleted release records of CRs that no longer exist", "records", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sweep deletes the records of CRs that no longer exist and returns how many.
func (s *releaseSweeper) sweep(ctx context.Context) (int, error) {
	records := &corev1.ConfigMapList{}
	if err := s.client.List(ctx, records, client.InNamespace(s.namespace), client.MatchingLabels{"owner": "helm", LabelManaged: "true"}); err != nil {
		return 0, fmt.Errorf("list release records: %w", err)
	}
	live := map[string]map[string]bool{} // kind/namespace -> UIDs
	deleted := 0
	for i := range records.Items {
		rec := &records.Items[i]
		kind, ns, uid := rec.Labels[LabelOwnerKind], rec.Labels[LabelOwnerNamespace], rec.Labels[LabelOwnerUID]
		k, ok := s.kinds[kind]
		if !ok || ns == "" || uid == "" {
			continue
		}
		key := kind + "/" + ns
		if live[key] == nil {
			uids, err := s.uids(ctx, k, ns)
			if err != nil {
				return deleted, err
			}
			live[key] = uids
		}
		if live[key][uid] {
			continue
		}
		if err := s.client.Delete(ctx, rec, client.Preconditions{UID: &rec.UID}); client.IgnoreNotFound(err) != nil {
			return deleted, fmt.Errorf("delete release record %s: %w", rec.Name, err)
		}
		deleted++
	}
	return deleted, nil
}

func (s *releaseSweeper) uids(ctx context.Context, k Registered, ns string) (map[string]bool, error) {
	list := k.Meta().NewList()
	if err := s.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", k.Meta().GVK.Kind, ns, err)
	}
	out := map[string]bool{}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			out[string(obj.GetUID())] = true
		}
		return nil
	})
	return out, err
}
