package release

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	reader    client.Reader // the API server, for ClusterRoleBindings (never cached)
	namespace string
	kinds     map[string]Registered
	period    time.Duration
}

// NewSweeper returns the runnable that deletes the release records (in the
// operator's namespace) of the kinds' CRs that no longer exist, at start and
// every period (10 minutes when 0).
//
// It deletes, the same way, the cluster-scoped objects a kind writes for a
// CR outside Helm (TrustyAI's proxy ClusterRoleBindings): labelled with the
// operator's label and their CR's kind, namespace and UID, read from the
// API server (reader).
func NewSweeper(c client.Client, reader client.Reader, namespace string, kinds []Registered, period time.Duration) manager.Runnable {
	s := &releaseSweeper{client: c, reader: reader, namespace: namespace, kinds: map[string]Registered{}, period: period}
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
	var leftovers []client.Object
	for i := range records.Items {
		leftovers = append(leftovers, &records.Items[i])
	}
	if s.reader != nil {
		bindings := &metav1.PartialObjectMetadataList{}
		bindings.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBindingList"))
		if err := s.reader.List(ctx, bindings, client.MatchingLabels{LabelManaged: "true"}, client.HasLabels{LabelOwnerKind, LabelOwnerUID}); err != nil {
			return 0, fmt.Errorf("list the operator's ClusterRoleBindings: %w", err)
		}
		for i := range bindings.Items {
			bindings.Items[i].SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"))
			leftovers = append(leftovers, &bindings.Items[i])
		}
	}
	live := map[string]map[string]bool{} // kind/namespace -> UIDs
	deleted := 0
	for _, obj := range leftovers {
		l := obj.GetLabels()
		kind, ns, uid := l[LabelOwnerKind], l[LabelOwnerNamespace], l[LabelOwnerUID]
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
		objUID := obj.GetUID()
		if err := s.client.Delete(ctx, obj, client.Preconditions{UID: &objUID}); client.IgnoreNotFound(err) != nil {
			return deleted, fmt.Errorf("delete %s of a CR that is gone: %w", obj.GetName(), err)
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
