package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// This file is one CR's way through the reconciler, top to bottom:
//
//	Reconcile: fetch the CR, add the finalizer, defer the one status write,
//	then reconcileDelete or reconcileNormal; the requeue comes with the
//	status write.
//	reconcileNormal: Gather -> Values -> Prepare -> apply (apply.go) ->
//	Finish, then what the deployed release holds, for Status.
//	reconcileDelete: the operator's own uninstall (apply.go), then the
//	finalizer goes.
//
// What is not written again is remembered in the caches (caches.go).

// pass is what one reconcile learned, for the status write at its end.
type pass struct {
	// orig is the CR as read (after the finalizer), the base of the status patch.
	orig client.Object
	// obs is what Status is told; inputs what Gather read (possibly partial
	// when Gather failed, nil when the CR is being deleted).
	obs    Observation
	inputs any
	// write is true once the pass knows enough to compute the status; a
	// pass that stopped on an error to retry writes none.
	write bool
	// requeue is true when the next reconcile is scheduled (the period, a
	// recheck); a deleted CR is not.
	requeue bool
}

// Reconcile brings one CR's release and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	obj := r.meta.NewObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Typed objects read from a cache carry no TypeMeta; owner references need it.
	obj.GetObjectKind().SetGroupVersionKind(r.meta.GVK)
	relName := helm.OwnerOf(obj, r.meta.GVK.Kind, r.meta.ReleasePrefix).Release
	hc, err := r.releaseClient(obj, relName)
	if err != nil {
		return ctrl.Result{}, err
	}
	deleting := !obj.GetDeletionTimestamp().IsZero()

	if !deleting {
		if err := AddFinalizer(ctx, r.client, obj); apierrors.IsConflict(err) {
			// The cache was behind the API server: try again once it caught up.
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // a rate-limited requeue: RequeueAfter would be a fixed delay (controller-runtime keeps Requeue until v1)
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}

	p := &pass{orig: obj.DeepCopyObject().(client.Object), obs: Observation{Now: r.now(), Deleting: deleting}}
	defer func() {
		err = errors.Join(err, r.writeStatus(ctx, obj, p))
		switch {
		case err != nil:
			// Retried with backoff.
			res = ctrl.Result{}
		case p.requeue:
			res = ctrl.Result{RequeueAfter: r.requeueAfter(obj, p.obs.Failure)}
		}
	}()

	if deleting {
		return r.reconcileDelete(ctx, obj, hc, relName, p)
	}
	return ctrl.Result{}, r.reconcileNormal(ctx, obj, hc, relName, p)
}

// releaseClient is the client of the CR's release for this reconcile: its
// records, its policy and ownership, and the cluster's capabilities.
func (r *Reconciler) releaseClient(obj client.Object, relName string) (*helm.Client, error) {
	hc, err := r.releases.For(obj, r.meta.GVK.Kind)
	if err != nil {
		return nil, fmt.Errorf("release client: %w", err)
	}
	hc.Policy, hc.Ownership = r.policy(obj), r.ownership(obj, relName)
	hc.Caps = common.DefaultCapabilities
	if r.helmCaps != nil {
		caps, err := r.helmCaps()
		if err != nil {
			return nil, err
		}
		hc.Caps = caps
	}
	return hc, nil
}

// reconcileDelete uninstalls the release; the finalizer holds until it is
// gone, and meanwhile the CR says why (phase Terminating).
func (r *Reconciler) reconcileDelete(ctx context.Context, obj client.Object, hc *helm.Client, relName string, p *pass) (ctrl.Result, error) {
	err := r.uninstall(ctx, obj, hc, relName)
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // a rate-limited requeue: RequeueAfter would be a fixed delay (controller-runtime keeps Requeue until v1)
	case err != nil:
		p.obs.Applied, p.write = true, true
		p.obs.Failure = &status.Failure{Reason: status.ReasonUninstallFailed, Message: err.Error()}
	}
	return ctrl.Result{}, err
}

// reconcileNormal renders and applies the chart for the spec, and learns
// what Status needs. It returns an error to retry with backoff; a problem
// the user or the administrator fixes is an Observation.Failure instead.
func (r *Reconciler) reconcileNormal(ctx context.Context, obj client.Object, hc *helm.Client, relName string, p *pass) error {
	kind := r.meta.GVK.Kind
	start := time.Now()
	inputs, err := r.kind.Gather(ctx, obj)
	var vals map[string]any
	if err == nil {
		vals, err = r.kind.Values(obj, inputs)
	}
	timePhase(kind, PhaseGather, start)
	p.inputs = inputs

	var done applied
	var failure *status.Failure
	switch {
	case errors.As(err, &failure):
		// The user (or the administrator) must change something: say what,
		// and wait. The event comes with the Reconciled condition's transition.
		p.obs.Failure = failure
	case err != nil:
		return err
	default:
		if done, err = r.prepareApplyFinish(ctx, obj, hc, relName, inputs, vals, p); err != nil {
			return err
		}
	}

	// The status reads the deployed release's objects: apply knows it when
	// it found the release in sync or installed or upgraded it; otherwise
	// (a failure, or nothing applied) the records are asked.
	deployed, err := done.release, error(nil)
	if deployed == nil {
		deployed, err = hc.Store.Deployed(relName)
	}
	switch {
	case err == nil:
		p.obs.Applied = true
		p.obs.Objects = r.manifests.objects(deployed.Manifest)
	case !errors.Is(err, helm.ErrNoDeployedReleases) && !errors.Is(err, helm.ErrReleaseNotFound):
		return errors.Join(done.err, fmt.Errorf("read release %s: %w", relName, err))
	case p.obs.Failure != nil:
		// Nothing deployed, and the manifest refused for objects in its
		// way: the status reads the objects it renders that exist, whoever
		// made them (an upstream operator's, left in place), and tells
		// what runs.
		p.obs.Objects = renderedRefs(p.obs.Failure.Rendered)
	}
	// An apply error is returned so that the work is retried with backoff,
	// after the status says why.
	p.write, p.requeue = true, true
	return done.err
}

// applied is what prepareApplyFinish did.
type applied struct {
	// release is the release apply found in sync or made, when it is
	// deployed; nil otherwise.
	release *helmrelease.Release
	// err is an apply error: returned once the status says why, so that
	// the work is retried with backoff.
	err error
}

// prepareApplyFinish writes what the chart mounts (Prepare: the CA bundle),
// applies the chart, and then writes what the kind writes outside Helm for
// the CR's objects (Finish: bindings, wiring), which waits until they passed
// the gate. Its error is one to retry at once; an apply error is in applied,
// retried after the status is written.
func (r *Reconciler) prepareApplyFinish(ctx context.Context, obj client.Object, hc *helm.Client, relName string, inputs any, vals map[string]any, p *pass) (applied, error) {
	kind := r.meta.GVK.Kind
	start := time.Now()
	f, err := outsideHelm(r.kind.Prepare(ctx, obj, inputs))
	timePhase(kind, PhasePrepare, start)
	if err != nil || f != nil {
		p.obs.Failure = f
		return applied{}, err
	}
	start = time.Now()
	current, f, applyErr := r.apply(ctx, hc, obj, relName, vals)
	timePhase(kind, PhaseApply, start)
	p.obs.Failure = f
	if current == nil || f != nil || applyErr != nil {
		return applied{release: current, err: applyErr}, nil
	}
	start = time.Now()
	finished, err := r.kind.Finish(ctx, obj, inputs)
	f, err = outsideHelm(err)
	timePhase(kind, PhasePrepare, start)
	p.obs.Failure, p.obs.Finished = f, finished
	return applied{release: current}, err
}

// writeStatus computes the CR's status from what the pass learned and
// writes it when it changed (and is not the one this reconciler just wrote);
// each condition that changed is an event.
func (r *Reconciler) writeStatus(ctx context.Context, obj client.Object, p *pass) error {
	if !p.write {
		return nil
	}
	start := time.Now()
	defer func() { timePhase(r.meta.GVK.Kind, PhaseStatus, start) }()
	if err := r.kind.Status(ctx, obj, p.inputs, p.obs); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(p.orig, obj) || r.statuses.written(p.orig, obj) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, obj, client.MergeFrom(p.orig)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone: nothing to say
		}
		return fmt.Errorf("update status: %w", err)
	}
	r.statuses.remember(obj)
	r.recordTransitions(obj, r.kind.Conditions(p.orig), r.kind.Conditions(obj))
	return nil
}

// requeueAfter is when the CR is looked at again: the reconcile period; an
// invalid spec waits for the user to change it, but a name conflict is
// looked at again soon, since the user may rename or delete the object in
// the way (which no watch of the operator sees), and so is a refused write
// (the administrator fixes the installation, which no watch sees). The kind
// may want to look again sooner at what no watch of the operator sees (a
// Route's admission, a Secret's appearance), from the status just computed.
func (r *Reconciler) requeueAfter(obj client.Object, failure *status.Failure) time.Duration {
	after := r.period
	if failure != nil && recheckSoon[failure.Reason] && (after == 0 || after > conflictRecheck) {
		after = conflictRecheck
	}
	if d := r.kind.Recheck(obj); d > 0 && (after == 0 || d < after) {
		after = d
	}
	return after
}

// outsideHelm sorts out an error of a kind's writes outside Helm: a failure
// the user or the administrator fixes (passed on as it is), or an error to
// retry.
func outsideHelm(err error) (*status.Failure, error) {
	var failure *status.Failure
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &failure):
		return failure, nil
	case apierrors.IsForbidden(err):
		// Retrying with backoff would not say why nothing happens.
		return &status.Failure{Reason: status.ReasonOperatorForbidden, Message: err.Error() + ": the operator's installation does not allow what this resource needs (docs/security.md lists its permissions)"}, nil
	}
	return nil, err
}
