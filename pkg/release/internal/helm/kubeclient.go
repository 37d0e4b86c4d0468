package helm

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	helmkube "helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// reachableFor is how long a passed reachability check stands.
const reachableFor = 10 * time.Second

// KubeClient is Helm's kube client for one reconcile of one CR, with two
// changes.
//
// Deletes pass the ownership rule. Helm's upgrade deletes every object of
// the old manifest that the new one lacks, whoever it belongs to by then: a
// ConfigMap the user put in place of the operator's, or anything a release
// of another CR listed. Here the upgrade updates and creates as Helm does
// and deletes nothing itself; the objects the new manifest dropped are then
// deleted only when they are in the CR's namespace, of a kind the chart
// declares, not kept by the chart (helm.sh/resource-policy: keep) and the
// operator's for this CR, each with its UID as a precondition. The others
// are left, and the reconciler says so (ObjectsLeft).
//
// The reachability check is remembered. Helm asks the API server for its
// version before each action (get, install, upgrade, uninstall): three
// requests for every new CR, and one for every reconcile. A check that
// passed within reachableFor, for any CR, is not asked again; when the API
// server has gone since, the action's own requests fail as clearly, and the
// reconcile is retried.
type KubeClient struct {
	*helmkube.Client
	// passed is when a check last passed (Unix nanoseconds), shared by a
	// reconciler's clients.
	passed *atomic.Int64
	policy guard.Policy
	own    guard.Ownership
	// left are the objects the new manifest dropped that are not the
	// operator's, which Update left ("Kind namespace/name").
	left []string
}

// NewKubeClient wraps Helm's kube client for one reconcile of one CR: passed
// is shared by the clients of a reconciler (when a reachability check last
// passed), policy and own are the CR's.
func NewKubeClient(kc *helmkube.Client, passed *atomic.Int64, policy guard.Policy, own guard.Ownership) *KubeClient {
	return &KubeClient{Client: kc, passed: passed, policy: policy, own: own}
}

// Left are the objects an upgrade's new manifest dropped that are not the
// operator's, which it left ("Kind namespace/name").
func (c *KubeClient) Left() []string { return c.left }

// IsReachable implements helmkube.Interface.
func (c *KubeClient) IsReachable() error {
	now := time.Now()
	if t := c.passed.Load(); t != 0 && now.Sub(time.Unix(0, t)) < reachableFor {
		return nil
	}
	if err := c.Client.IsReachable(); err != nil {
		return err
	}
	c.passed.Store(now.UnixNano())
	return nil
}

// Update implements helmkube.Interface: Helm's update of what both
// manifests hold and the new one adds, then the guarded delete of what the
// new one dropped.
func (c *KubeClient) Update(original, target helmkube.ResourceList, force bool) (*helmkube.Result, error) {
	dropped := original.Difference(target)
	res, err := c.Client.Update(original.Intersect(target), target, force)
	if err != nil {
		return res, err
	}
	for _, info := range dropped {
		deleted, left, err := deleteOwned(info, c.policy, c.own)
		switch {
		case err != nil:
			return res, err
		case left != "":
			c.left = append(c.left, left)
		case deleted:
			res.Deleted = append(res.Deleted, info)
		}
	}
	slices.Sort(c.left)
	return res, nil
}

// allowed says whether the policy lets the operator act on an object of a
// stored manifest: in the CR's namespace and of a kind the chart declares.
func allowed(info *resource.Info, p guard.Policy) bool {
	return info.Namespace == p.Namespace && slices.Contains(p.Kinds, info.Mapping.GroupVersionKind.GroupKind())
}

// deleteOwned deletes one object of a stored manifest when the policy
// allows it, the chart does not keep it and it is the operator's for this
// CR, with its UID as a precondition. left names an object that exists and
// is someone else's.
func deleteOwned(info *resource.Info, p guard.Policy, own guard.Ownership) (deleted bool, left string, err error) {
	if !allowed(info, p) {
		return false, "", nil
	}
	l, conflict, err := readLive(info, own)
	switch {
	case err != nil:
		return false, "", err
	case l.existing == nil:
		return false, "", nil
	case conflict != nil:
		return false, l.ref(), nil
	}
	m, err := meta.Accessor(l.existing)
	if err != nil {
		return false, "", err
	}
	if m.GetAnnotations()[helmkube.ResourcePolicyAnno] == helmkube.KeepPolicy {
		return false, "", nil
	}
	uid := m.GetUID()
	background := metav1.DeletePropagationBackground
	_, err = resource.NewHelper(info.Client, info.Mapping).DeleteWithOptions(info.Namespace, info.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone, or replaced since it was checked: not this one to delete.
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("delete %s: %w", l.ref(), err)
	}
	return true, "", nil
}
