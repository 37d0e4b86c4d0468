package helm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// Client installs and upgrades one CR's release: the operator's own, over
// Helm's chart engine and release format. A release is rendered (Helm's
// engine and install order), passed through the gate, applied object by
// object with server-side apply under one field manager, one request per
// object that needs one (nothing for an object that holds everything the
// render says and that the last revision rendered the same), and then
// recorded in Helm's format, which `helm history` reads. It runs no hooks,
// waits for nothing and never rolls back: a failed revision is recorded
// failed, reported in status and retried.
type Client struct {
	Store *Store
	Kube  *Kube
	// Caps are the cluster's capabilities, as the templates see them.
	Caps *common.Capabilities
	// Policy and Ownership are the CR's: what its manifests may hold, and
	// which objects are the operator's for it.
	Policy    guard.Policy
	Ownership guard.Ownership
	// Now is the time of a record; time.Now when nil.
	Now func() time.Time
}

// Action is one install or upgrade.
type Action struct {
	Name, Namespace string
	Chart           *chart.Chart
	Values          map[string]any
	// Labels are the record's labels (the owner's and the operator's).
	Labels map[string]string
	// Gate checks the rendered manifest and returns what to apply.
	Gate *Gate
	// MaxHistory caps the revisions kept (0: all).
	MaxHistory int
}

// Result is what an upgrade did besides the apply: the objects of the
// earlier revision it deleted, and those it left (not the operator's).
type Result struct {
	Deleted, Left []string
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Install renders, gates, applies and records revision 1 of a release. A
// refusal of the gate records nothing; a failed apply records a failed
// revision.
func (c *Client) Install(ctx context.Context, a Action) (*helmrelease.Release, error) {
	gated, err := c.render(ctx, a)
	if err != nil {
		return nil, err
	}
	now := c.now()
	rel := &helmrelease.Release{
		Name: a.Name, Namespace: a.Namespace, Chart: a.Chart, Config: a.Values, Manifest: gated.Manifest,
		Version: 1, Labels: a.Labels, ApplyMethod: string(helmrelease.ApplyMethodServerSideApply),
		Info: &helmrelease.Info{FirstDeployed: now, LastDeployed: now},
	}
	if err := c.apply(ctx, gated, nil); err != nil {
		rel.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Release %q failed: %s", a.Name, err))
		return nil, errors.Join(err, c.Store.Create(rel, a.MaxHistory))
	}
	rel.SetStatus(rcommon.StatusDeployed, "Install complete")
	if err := c.Store.Create(rel, a.MaxHistory); err != nil {
		return nil, c.notRecorded(rel, err)
	}
	return rel, nil
}

// Upgrade renders, gates and applies the next revision of a release whose
// latest revision is last, deletes the operator's objects of the revision
// it replaces that the new one no longer renders, and records it; the
// deployed revisions (one, unless an earlier process died mid-write) are
// recorded superseded first.
func (c *Client) Upgrade(ctx context.Context, a Action, last *helmrelease.Release) (*helmrelease.Release, Result, error) {
	current := last
	if last.Info == nil || last.Info.Status != rcommon.StatusDeployed {
		d, err := c.Store.Deployed(a.Name)
		switch {
		case err == nil:
			current = d
		case !errors.Is(err, ErrNoDeployedReleases):
			return nil, Result{}, err
		}
	}
	gated, err := c.render(ctx, a)
	if err != nil {
		return nil, Result{}, err
	}
	rel := &helmrelease.Release{
		Name: a.Name, Namespace: a.Namespace, Chart: a.Chart, Config: a.Values, Manifest: gated.Manifest,
		Version: last.Version + 1, Labels: a.Labels, ApplyMethod: string(helmrelease.ApplyMethodServerSideApply),
		Info: &helmrelease.Info{LastDeployed: c.now()},
	}
	if current.Info != nil {
		rel.Info.FirstDeployed = current.Info.FirstDeployed
	}
	previous := c.previous(current.Manifest)
	res := Result{}
	err = c.apply(ctx, gated, previous)
	if err == nil {
		res, err = c.deleteDropped(ctx, current.Manifest, gated)
	}
	if err != nil {
		rel.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Upgrade %q failed: %s", a.Name, err))
		return nil, res, errors.Join(err, c.Store.Create(rel, a.MaxHistory))
	}
	// The revisions deployed so far are superseded before the new one is
	// stored, as Helm orders it: a process killed in between leaves no
	// deployed revision, and the next reconcile upgrades again, where the
	// other order would leave two deployed for good.
	history, err := c.Store.History(a.Name)
	if err != nil && !errors.Is(err, ErrReleaseNotFound) {
		return nil, res, err
	}
	for _, h := range history {
		if h.Info != nil && h.Info.Status == rcommon.StatusDeployed {
			h.Info.Status = rcommon.StatusSuperseded
			if err := c.Store.Update(h); err != nil {
				return nil, res, c.notRecorded(h, err)
			}
		}
	}
	rel.SetStatus(rcommon.StatusDeployed, "Upgrade complete")
	if err := c.Store.Create(rel, a.MaxHistory); err != nil {
		return nil, res, c.notRecorded(rel, err)
	}
	return rel, res, nil
}

// NotRecorded is objects applied whose release record was not stored.
type NotRecorded struct {
	Release string
	Version int
	Err     error
}

func (e *NotRecorded) Error() string {
	return fmt.Sprintf("store release %s revision %d: %v", e.Release, e.Version, e.Err)
}
func (e *NotRecorded) Unwrap() error { return e.Err }

func (c *Client) notRecorded(rel *helmrelease.Release, err error) error {
	return &NotRecorded{Release: rel.Name, Version: rel.Version, Err: err}
}

// render renders the chart for the action and passes it through the gate.
func (c *Client) render(ctx context.Context, a Action) (*Gated, error) {
	manifest, err := render.Manifest(a.Chart, a.Values, a.Name, a.Namespace, c.Caps, false)
	if err != nil {
		return nil, err
	}
	return a.Gate.Run(ctx, manifest)
}

// previous is the earlier revision's objects by "group/Kind/namespace/name",
// as the gate passed them, for the objects the manifest can still build (a
// kind whose API went is not compared; an object not found there, or left
// out by an error, is applied).
func (c *Client) previous(manifest string) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	_ = eachStored(c.Kube, manifest, func(o *Object) error {
		out[key(o)] = o.Unstructured
		return nil
	})
	return out
}

// eachStored calls f for each object of a stored manifest, one document at
// a time: the API of an optional kind (a ServiceMonitor, a Route) may have
// been removed since, and with it every object of that kind, which is then
// skipped.
func eachStored(k *Kube, manifest string, f func(*Object) error) error {
	for _, doc := range guard.Documents(manifest) {
		objs, err := k.Build(doc)
		switch {
		case meta.IsNoMatchError(err):
			continue
		case err != nil:
			return err
		}
		for _, o := range objs {
			if err := f(o); err != nil {
				return err
			}
		}
	}
	return nil
}

func key(o *Object) string {
	return o.Mapping.GroupVersionKind.GroupKind().String() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// apply applies each gated object that needs it, in the manifest's order:
// one that does not exist; one whose live state lacks a field the render
// sets or holds another value; one the earlier revision rendered
// otherwise (a field it set and the render dropped is removed only by an
// apply). The others are not written.
func (c *Client) apply(ctx context.Context, gated *Gated, previous map[string]*unstructured.Unstructured) error {
	for _, l := range gated.Objects {
		// The stored manifest lacks the marks set as an object is applied.
		differs := changed(l.obj, previous)
		markHelmOwned(l.obj.Unstructured, c.Ownership)
		if l.existing != nil && !differs {
			drifted, err := compare(l.obj.Unstructured, l.existing)
			if err != nil {
				return err
			}
			if !drifted {
				continue
			}
		}
		if err := c.Kube.Apply(ctx, l.obj, l.existing); err != nil {
			return err
		}
	}
	return nil
}

// changed says whether the earlier revision (nil: none) rendered o
// otherwise (both as the gate passed them, before the marks set as they are
// applied).
func changed(o *Object, previous map[string]*unstructured.Unstructured) bool {
	if previous == nil {
		return false
	}
	p, ok := previous[key(o)]
	if !ok {
		return true
	}
	ja, errA := p.MarshalJSON()
	jb, errB := o.MarshalJSON()
	return errA != nil || errB != nil || string(ja) != string(jb)
}

// deleteDropped deletes the objects of the replaced revision that the new
// one does not render, when they are the operator's (deleteOwned).
func (c *Client) deleteDropped(ctx context.Context, manifest string, gated *Gated) (Result, error) {
	rendered := map[string]bool{}
	for _, l := range gated.Objects {
		rendered[key(l.obj)] = true
	}
	var res Result
	err := eachStored(c.Kube, manifest, func(o *Object) error {
		if rendered[key(o)] {
			return nil
		}
		deleted, left, err := deleteOwned(ctx, c.Kube, o, c.Policy, c.Ownership)
		switch {
		case err != nil:
			return err
		case left != "":
			res.Left = append(res.Left, left)
		case deleted:
			res.Deleted = append(res.Deleted, o.Mapping.GroupVersionKind.Kind+"/"+o.GetName())
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	slices.Sort(res.Left)
	return res, nil
}
