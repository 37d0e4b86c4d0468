package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Applying a release: install, upgrade, drift repair and the uninstall, each
// through the gate (the chart's policy and the ownership of every name).

// policy is what a manifest of this CR may hold.
func (r *Reconciler) policy(obj client.Object) guard.Policy {
	return guard.Policy{Namespace: obj.GetNamespace(), Kinds: r.chart.Kinds}
}

// ownership describes the objects the operator renders for this CR.
func (r *Reconciler) ownership(obj client.Object, relName string) guard.Ownership {
	return ownership(r.meta, obj, relName)
}

// OwnershipOf describes the objects the operator renders for a CR of the
// kind: what marks them as its own, and which it takes over (`manager
// preflight` asks what the gate will decide).
func OwnershipOf(m Meta, obj client.Object) guard.Ownership {
	return ownership(m, obj, naming.ReleaseName(m.ReleasePrefix, obj.GetNamespace(), obj.GetName()))
}

func ownership(m Meta, obj client.Object, relName string) guard.Ownership {
	own := guard.Ownership{Label: LabelManaged, Release: relName, Owner: m.GVK.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
	if legacy := naming.LegacyReleaseName(m.ReleasePrefix, obj.GetNamespace(), obj.GetName()); legacy != relName {
		own.Legacy = legacy
	}
	return own
}

// gate is the operator's gate for an install or upgrade of the CR's release.
func (r *Reconciler) gate(hc *helm.Client, obj client.Object, relName string, vals map[string]any) *helm.Gate {
	return &helm.Gate{Kube: hc.Kube, Policy: hc.Policy, Ownership: hc.Ownership, Owner: obj, OwnerKind: r.meta.GVK, Record: helm.RecordCheck(obj, relName, r.chart.Chart, vals)}
}

// failed turns a failed Helm action into a status failure: problems the user
// fixes carry their own reason and are not retried with backoff; anything
// else is returned to be retried.
func (r *Reconciler) failed(obj client.Object, reason, relName string, err error) (*status.Failure, error) {
	if f := helm.AsUserError(err); f != nil {
		// The event comes with the Reconciled condition's transition.
		return f, nil
	}
	r.recorder.Eventf(obj, corev1.EventTypeWarning, reason, "%s of release %s failed: %v", strings.ToLower(strings.TrimSuffix(reason, "Failed")), relName, err)
	return &status.Failure{Reason: reason, Message: err.Error()}, err
}

// checkValues validates values against the chart's values.schema.json before
// Helm does, so that a violation is an invalid spec, not a failed install.
func (r *Reconciler) checkValues(vals map[string]any) *status.Failure {
	validate := func() error { return chartutil.ValidateAgainstSchema(r.chart.Chart, vals) }
	if r.schema != nil {
		validate = func() error { return r.schema.Validate(vals) }
	}
	if err := validate(); err != nil {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: "the spec translates into chart values the chart refuses: " + strings.TrimSpace(err.Error())}
	}
	return nil
}

// valuesDigest identifies values and chart, for refusals.
func (r *Reconciler) valuesDigest(vals map[string]any) string {
	b, _ := json.Marshal(vals) // maps marshal with sorted keys
	sum := sha256.Sum256(append(b, r.chart.Digest...))
	return hex.EncodeToString(sum[:])
}

// apply installs or upgrades the release, or repairs its objects when it is
// in sync, and returns the release when it is then deployed. It upgrades
// only when the values or the chart differ from the deployed release's, so
// that an unchanged CR costs reads only. Every install and upgrade goes
// through the gate (the chart's policy and the ownership of every name), and
// drift repair checks the stored manifest the same way before it writes.
func (r *Reconciler) apply(ctx context.Context, hc *helm.Client, obj client.Object, relName string, vals map[string]any) (*helmrelease.Release, *status.Failure, error) {
	// Whose release this is: the storage serves a CR its own records only,
	// and the sweep removes records whose CR is gone.
	owner := helm.OwnerOf(obj, r.meta.GVK.Kind, r.meta.ReleasePrefix)
	labels := owner.Labels()
	labels[LabelManaged], labels[LabelChartDigest] = "true", r.chart.Digest[:32]
	last, err := hc.Store.Last(relName)
	if err != nil && !errors.Is(err, helm.ErrReleaseNotFound) {
		return nil, &status.Failure{Reason: status.ReasonReleaseUnreadable, Message: err.Error()}, fmt.Errorf("read release %s: %w", relName, err)
	}
	// Drift is repaired toward a release of this very CR only: a release of
	// an earlier CR of the same name (its objects name a dead owner, which the
	// garbage collector deletes) is upgraded, rendering every object again.
	if last != nil && last.Info.Status == rcommon.StatusDeployed && reflect.DeepEqual(last.Config, vals) && last.Labels[LabelChartDigest] == labels[LabelChartDigest] && owner.Current(last.Labels) {
		revision := fmt.Sprintf("%s/%d/%s", relName, last.Version, labels[LabelChartDigest])
		if r.drift.unchanged(obj.GetUID(), revision, r.cachedVersion(ctx)) {
			return last, nil, nil
		}
		seen := &checkedCopies{}
		repaired, err := helm.RepairDrift(ctx, hc.Kube, last.Manifest, r.policy(obj), r.ownership(obj, relName), r.checkedCopies(ctx, seen))
		if err == nil && len(repaired) == 0 && seen.complete {
			r.drift.remember(obj.GetUID(), revision, seen.objects)
		} else {
			r.drift.forget(obj.GetUID())
		}
		if len(repaired) > 0 {
			r.recorder.Eventf(obj, corev1.EventTypeNormal, "DriftRepaired", "restored %s to what release %s renders", strings.Join(repaired, ", "), relName)
		}
		f, err := r.failedUnlessNil(obj, status.ReasonDriftRepairFailed, relName, err)
		return last, f, err
	}

	// Install or upgrade: values the chart or the API server refuses are an
	// invalid spec, and the same values are not sent again.
	if f := r.checkValues(vals); f != nil {
		return nil, f, nil
	}
	digest := r.valuesDigest(vals)
	if f := r.refusals.refused(obj.GetUID(), digest); f != nil {
		return nil, f, nil
	}
	var (
		rel *helmrelease.Release
		f   *status.Failure
	)
	if last == nil {
		rel, f, err = r.install(ctx, hc, obj, relName, vals, labels)
		if err == nil && f == nil && rel != nil {
			err = r.sweepUnrendered(ctx, obj, relName, rel.Manifest)
		}
	} else {
		rel, f, err = r.upgrade(ctx, hc, obj, relName, vals, labels, last)
	}
	r.refusals.remember(obj.GetUID(), digest, f)
	if rel != nil && rel.Info.Status != rcommon.StatusDeployed {
		rel = nil
	}
	return rel, f, err
}

// sweepUnrendered deletes, after an install, the operator's objects of this
// CR that the installed manifest does not hold. An install finds no release
// records: the CR is new, or its records were deleted by hand, and then the
// objects an earlier spec rendered (an Ingress, a PDB) would stay forever,
// owned by a live CR that no longer renders them. The owned types' cache
// holds the operator's objects only; each is deleted when it is the
// operator's for this very CR (its controller is this CR, by UID), with its
// UID as a precondition. Objects the chart keeps have no controller and stay.
func (r *Reconciler) sweepUnrendered(ctx context.Context, obj client.Object, relName string, manifest string) error {
	rendered := map[string]bool{}
	for _, o := range r.manifests.objects(manifest) {
		rendered[o.Kind+"/"+o.Name] = true
	}
	own := r.ownership(obj, relName)
	var swept []string
	for _, t := range r.meta.OwnedTypes {
		gvk, err := apiutil.GVKForObject(t, r.client.Scheme())
		if err != nil {
			return err
		}
		// The typed list: the cache already watches these types (a list of
		// their metadata would start a second watch of each).
		lo, err := r.client.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		list := lo.(client.ObjectList)
		// The cache's own objects, not copies: they are read and deleted,
		// never changed, and a namespace of many CRs holds many (each
		// install listed them all, copied: issue 33).
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{LabelManaged: "true"}, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		err = meta.EachListItem(list, func(o runtime.Object) error {
			item, ok := o.(client.Object)
			if !ok {
				return nil
			}
			c := metav1.GetControllerOfNoCopy(item)
			if c == nil || c.UID != obj.GetUID() || rendered[gvk.Kind+"/"+item.GetName()] {
				return nil
			}
			if own.Check(gvk.Kind, item.GetLabels(), item.GetAnnotations(), item.GetOwnerReferences()) != nil {
				return nil
			}
			uid := item.GetUID()
			if err := r.client.Delete(ctx, item, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete %s %s: %w", gvk.Kind, item.GetName(), err)
			}
			swept = append(swept, gvk.Kind+" "+item.GetName())
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(swept) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "ObjectsPruned", "deleted %s: the spec no longer renders them (release %s had no records)", strings.Join(swept, ", "), relName)
	}
	return nil
}

// failedUnlessNil is failed for an error and nothing for none.
func (r *Reconciler) failedUnlessNil(obj client.Object, reason, relName string, err error) (*status.Failure, error) {
	if err == nil {
		return nil, nil
	}
	return r.failed(obj, reason, relName, err)
}

func (r *Reconciler) install(ctx context.Context, hc *helm.Client, obj client.Object, relName string, vals map[string]any, labels map[string]string) (*helmrelease.Release, *status.Failure, error) {
	rel, err := hc.Install(ctx, r.action(hc, obj, relName, vals, labels))
	if err != nil {
		f, err := r.failedAction(obj, status.ReasonInstallFailed, relName, err)
		return nil, f, err
	}
	// A new CR's install is in its status (Reconciled, Ready), not in an
	// event: an event is a write, the fourth besides the objects (finalizer,
	// record, status), and a new CR costs its objects + 3 (issue 33).
	// Upgrades, repairs, uninstalls and failures are events. The events an
	// upstream operator emits for what it creates are kept (TrustyAI's
	// PVCCreated, ServiceMonitorCreated): tooling may wait for them.
	for _, o := range r.manifests.objects(rel.Manifest) {
		if reason := r.meta.CreatedEvents[o.Kind]; reason != "" {
			r.recorder.Eventf(obj, corev1.EventTypeNormal, reason, "created %s %s (installed release %s revision %d)", o.Kind, o.Name, rel.Name, rel.Version)
		}
	}
	return rel, nil, nil
}

func (r *Reconciler) upgrade(ctx context.Context, hc *helm.Client, obj client.Object, relName string, vals map[string]any, labels map[string]string, last *helmrelease.Release) (*helmrelease.Release, *status.Failure, error) {
	if st := last.Info.Status; st.IsPending() || st == rcommon.StatusUninstalling {
		if age := r.now().Sub(last.Info.LastDeployed); age < r.pendingGrace() {
			return nil, &status.Failure{Reason: status.ReasonReleaseBusy, Message: fmt.Sprintf("release %s revision %d has been %s for %s; it is left alone for %s in case another operation is still running, then marked failed and upgraded", relName, last.Version, st, age.Round(time.Second), r.pendingGrace())}, nil
		}
		// A killed operator leaves the release locked; Helm refuses every
		// action until it is marked failed, after which it upgrades cleanly.
		last.Info.Status = rcommon.StatusFailed
		last.Info.Description = fmt.Sprintf("left %s by an interrupted operation; marked failed by %s", st, ManagedBy)
		if err := hc.Store.Update(last); err != nil {
			return nil, &status.Failure{Reason: status.ReasonReleaseLocked, Message: err.Error()}, fmt.Errorf("repair release %s: %w", relName, err)
		}
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ReleaseRepaired", "release %s revision %d was left %s by an interrupted operation; marked failed and upgrading", relName, last.Version, st)
	}
	rel, res, err := hc.Upgrade(ctx, r.action(hc, obj, relName, vals, labels), last)
	if len(res.Left) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ObjectsLeft", "left %s: the spec no longer renders them, and they were not created by the operator for this resource", strings.Join(res.Left, ", "))
	}
	if err != nil {
		f, err := r.failedAction(obj, status.ReasonUpgradeFailed, relName, err)
		return nil, f, err
	}
	r.recorder.Eventf(obj, corev1.EventTypeNormal, "Upgraded", "upgraded release %s to revision %d", rel.Name, rel.Version)
	return rel, nil, nil
}

// action is an install or upgrade of the CR's release with the values.
func (r *Reconciler) action(hc *helm.Client, obj client.Object, relName string, vals map[string]any, labels map[string]string) helm.Action {
	return helm.Action{Name: relName, Namespace: obj.GetNamespace(), Chart: r.chart.Chart, Values: vals, Labels: labels, Gate: r.gate(hc, obj, relName, vals), MaxHistory: r.maxHistory}
}

// failedAction is failed for an install or upgrade; objects applied whose
// record was not stored are their own failure, retried with backoff (the
// next install adopts them).
func (r *Reconciler) failedAction(obj client.Object, reason, relName string, err error) (*status.Failure, error) {
	var nr *helm.NotRecorded
	if errors.As(err, &nr) {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, status.ReasonReleaseNotRecorded, "release %s: the objects were applied but their record was not stored: %v", relName, nr.Err)
		return &status.Failure{Reason: status.ReasonReleaseNotRecorded, Message: fmt.Sprintf("the objects of release %s were applied but its record was not stored (%v); retrying", relName, nr.Err)}, err
	}
	return r.failed(obj, reason, relName, err)
}

// uninstall removes what the release created and its records, then the
// finalizer. It is the operator's own, not Helm's: each object is deleted
// only if it is the operator's (an object of the same name that someone
// else created in the meantime is left, with an event), only inside the CR's
// namespace (whatever a stored manifest says), never when the chart keeps it
// (helm.sh/resource-policy: keep), and with its UID as a precondition, so
// that what is deleted is exactly what was checked.
func (r *Reconciler) uninstall(ctx context.Context, obj client.Object, hc *helm.Client, relName string) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	history, err := hc.Store.History(relName)
	if err != nil && !errors.Is(err, helm.ErrReleaseNotFound) {
		return fmt.Errorf("read release %s: %w", relName, err)
	}
	deleted, left, err := helm.DeleteReleaseObjects(ctx, hc.Kube, history, hc.Policy, hc.Ownership)
	if len(left) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, "ObjectsLeft", "left %s: not created by the operator for this resource", strings.Join(left, ", "))
	}
	if err != nil {
		return fmt.Errorf("uninstall release %s: %w", relName, err)
	}
	for _, rel := range history {
		if _, err := hc.Store.Delete(rel.Name, rel.Version); err != nil && !errors.Is(err, helm.ErrReleaseNotFound) {
			return fmt.Errorf("delete release %s revision %d: %w", rel.Name, rel.Version, err)
		}
	}
	if len(history) > 0 {
		r.recorder.Eventf(obj, corev1.EventTypeNormal, "Uninstalled", "uninstalled release %s (%d objects deleted)", relName, deleted)
	}
	r.refusals.forget(obj.GetUID())
	r.statuses.forget(obj.GetUID())
	r.drift.forget(obj.GetUID())
	if err := r.kind.Cleanup(ctx, obj); err != nil {
		return fmt.Errorf("clean up: %w", err)
	}
	return client.IgnoreNotFound(RemoveFinalizer(ctx, r.client, obj))
}
