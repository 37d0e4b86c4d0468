package trustyai

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// Kind is TrustyAIService for the release reconciler.
type Kind struct {
	release.Deps
	// budget bounds the wiring's writes to each model server.
	budget writeBudget
}

var (
	_ release.Kind[*trustyv1.TrustyAIService, *Inputs]     = (*Kind)(nil)
	_ release.Preparer[*trustyv1.TrustyAIService, *Inputs] = (*Kind)(nil)
	_ release.Finisher[*trustyv1.TrustyAIService, *Inputs] = (*Kind)(nil)
	_ release.ConfigMapReader[*trustyv1.TrustyAIService]   = (*Kind)(nil)
	_ release.Offline[*trustyv1.TrustyAIService, *Inputs]  = (*Kind)(nil)
)

// Meta implements release.Kind.
func (*Kind) Meta() release.Meta { return Meta() }

// Meta describes TrustyAIService to the reconciler. Routes,
// ServiceMonitors, Certificates, DestinationRules and VirtualServices are
// optional APIs and not watched (no watch of an API the cluster may not
// serve); drift on them is repaired on the next reconcile.
func Meta() release.Meta {
	return release.Meta{
		GVK:           trustyv1.GroupVersion.WithKind(trustyv1.Kind),
		NewObject:     func() client.Object { return &trustyv1.TrustyAIService{} },
		NewList:       func() client.ObjectList { return &trustyv1.TrustyAIServiceList{} },
		Chart:         Chart,
		ReleasePrefix: ReleasePrefix,
		RelatedImages: map[string]string{EnvServiceImage: DefaultServiceImage, trustyaifamily.EnvProxyImage: trustyaifamily.DefaultProxyImage},
		OwnedTypes: []client.Object{
			&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &corev1.PersistentVolumeClaim{}, &networkingv1.Ingress{},
		},
		OptionalAPIs: []schema.GroupVersionKind{platform.Route, platform.ServiceMonitor, platform.SCC, platform.Certificate, platform.InferenceService, platform.DestinationRule, platform.VirtualService},
		NamespaceWatches: []release.NamespaceWatch{
			{GVK: platform.InferenceService},
			{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Labels: ModelMeshLabels},
		},
		// ReplicasHonored's turn to False is a Warning event, once.
		WarningConditions: []string{status.TypeTrustReady, TypeProvisioningSucceeded, TypeDBAvailable, TypeReplicasHonored},
		// Upstream's event reasons (InferenceServiceConfigured is the wiring's).
		CreatedEvents: map[string]string{"PersistentVolumeClaim": "PVCCreated", "ServiceMonitor": "ServiceMonitorCreated"},
		// The proxy's ClusterRoleBinding, swept with its CR.
		OutsideTypes: []schema.GroupVersionKind{rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")},
	}
}

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(trustyv1.GroupVersion.WithKind(trustyv1.Kind))
}

// Values implements release.Kind.
func (k *Kind) Values(cr *trustyv1.TrustyAIService, in *Inputs) (map[string]any, error) {
	return release.ValuesOf(translate(cr, in.values))
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *trustyv1.TrustyAIService) []metav1.Condition { return cr.Status.Conditions }

// Prepare implements release.Preparer: the merged CA bundle, which the
// chart mounts, before the chart is applied. A proxy binding of the CR's
// name that is not the operator's (Gather read it) stops the CR before
// anything is applied.
func (k *Kind) Prepare(ctx context.Context, cr *trustyv1.TrustyAIService, in *Inputs) error {
	if in.bindingConflict != nil {
		return in.bindingConflict
	}
	return k.bundle().Write(ctx, cr, bundleName(cr.Name), map[string]string{"app.kubernetes.io/instance": cr.Name, "app.kubernetes.io/component": "ca-bundle"}, in.trust, in.stored)
}

// Finish implements release.Finisher: the proxy's ClusterRoleBinding and
// the model-server wiring, once the release's objects passed the gate. Both
// name the CR's ServiceAccount and Service: written before, a CR whose
// names are another team's (a NameConflict) would bind that team's
// ServiceAccount and send the model servers' payloads to its Service.
// What the wiring did (a *wiring) reaches Status as Observation.Finished.
func (k *Kind) Finish(ctx context.Context, cr *trustyv1.TrustyAIService, in *Inputs) (any, error) {
	if err := k.ensureProxyBinding(ctx, cr, in.binding); err != nil {
		return nil, err
	}
	w, err := k.wire(ctx, cr, in)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// Cleanup implements release.Preparer: what Prepare and Finish wrote goes
// with the CR.
func (k *Kind) Cleanup(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	if err := k.unwire(ctx, cr); err != nil {
		return err
	}
	if err := k.deleteProxyBinding(ctx, cr); err != nil {
		return err
	}
	return k.bundle().Delete(ctx, cr, bundleName(cr.Name))
}

// ConfigMapRefs implements release.ConfigMapReader: Open Data Hub's bundle
// (the injected ConfigMaps and the merged bundle are the CR's own and map to
// it by owner).
func (*Kind) ConfigMapRefs(cr *trustyv1.TrustyAIService) []string {
	return []string{cr.Namespace + "/" + trust.ODHBundle}
}

// SharedConfigMaps implements release.ConfigMapReader: the operator's
// settings and upstream's ConfigMap, both in the operator's namespace; a
// change to either reconciles every TrustyAIService.
func (k *Kind) SharedConfigMaps() []string {
	return k.SharedConfigMapsWith(trustyaifamily.UpstreamConfigMap)
}

// Recheck implements release.Rechecker: what no watch of the operator sees
// is looked at again while it is not as wanted, at intervals that grow with
// the time it has waited (release.Backoff: 10 s, then as long as it has
// waited, at most 10 minutes), never on a fixed short period: a Route no
// router admits, and in DATABASE mode the pods' credentials (what the
// kubelet says of them) while the database is not available. Once all is
// well, the reconcile period (and any event of the CR) is what looks again:
// Secret <name>-db-ca, looked up by name, appears within it. While another
// controller reverts the wiring: the write budget's window.
func (*Kind) Recheck(cr *trustyv1.TrustyAIService) time.Duration {
	var after time.Duration
	soonest := func(d time.Duration) {
		if d > 0 && (after == 0 || d < after) {
			after = d
		}
	}
	waiting := func(t string) {
		if c := meta.FindStatusCondition(cr.Status.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
			soonest(release.Backoff(time.Since(c.LastTransitionTime.Time)))
		}
	}
	waiting(TypeRouteAvailable)
	if cr.Spec.Storage.Format == trustyv1.StorageDatabase {
		waiting(TypeDBAvailable)
		waiting(status.TypeDeploymentReady)
	}
	if c := meta.FindStatusCondition(cr.Status.Conditions, TypeInferenceServicesPresent); c != nil && c.Reason == ReasonRevertedByAnother {
		soonest(wiringWindow)
	}
	return after
}
