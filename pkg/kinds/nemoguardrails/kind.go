package nemoguardrails

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

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/proxybinding"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// Kind is NemoGuardrails for the release reconciler.
type Kind struct {
	release.Deps
}

var (
	_ release.Kind[*nemov1alpha1.NemoGuardrails, *Inputs]     = (*Kind)(nil)
	_ release.Preparer[*nemov1alpha1.NemoGuardrails, *Inputs] = (*Kind)(nil)
	_ release.Finisher[*nemov1alpha1.NemoGuardrails, *Inputs] = (*Kind)(nil)
	_ release.ConfigMapReader[*nemov1alpha1.NemoGuardrails]   = (*Kind)(nil)
	_ release.Offline[*nemov1alpha1.NemoGuardrails, *Inputs]  = (*Kind)(nil)
	_ release.Rechecker[*nemov1alpha1.NemoGuardrails]         = (*Kind)(nil)
)

// Meta implements release.Kind.
func (*Kind) Meta() release.Meta { return Meta() }

// Meta describes NemoGuardrails to the reconciler. Routes and cert-manager's
// objects are optional APIs and not watched; drift on them is repaired on
// the next reconcile.
func Meta() release.Meta {
	return release.Meta{
		GVK:               nemov1alpha1.GroupVersion.WithKind(nemov1alpha1.Kind),
		NewObject:         func() client.Object { return &nemov1alpha1.NemoGuardrails{} },
		NewList:           func() client.ObjectList { return &nemov1alpha1.NemoGuardrailsList{} },
		Chart:             Chart,
		ReleasePrefix:     ReleasePrefix,
		RelatedImages:     map[string]string{EnvImage: DefaultImage, trustyaifamily.EnvProxyImage: trustyaifamily.DefaultProxyImage},
		OwnedTypes:        []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &networkingv1.Ingress{}},
		OptionalAPIs:      []schema.GroupVersionKind{platform.Route, platform.SCC, platform.Certificate},
		WarningConditions: []string{status.TypeTrustReady, TypeMCPGatewayConfigured},
		// The proxy's ClusterRoleBinding, swept with its CR.
		OutsideTypes: []schema.GroupVersionKind{rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")},
	}
}

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(nemov1alpha1.GroupVersion.WithKind(nemov1alpha1.Kind))
}

// Values implements release.Kind.
func (k *Kind) Values(cr *nemov1alpha1.NemoGuardrails, in *Inputs) (map[string]any, error) {
	return release.ValuesOf(translate(cr, in.values))
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *nemov1alpha1.NemoGuardrails) []metav1.Condition {
	return cr.Status.Conditions
}

// Prepare implements release.Preparer: the merged CA bundle, which the
// chart mounts, before the chart is applied; a proxy binding of the CR's
// name that is not the operator's stops the CR first.
func (k *Kind) Prepare(ctx context.Context, cr *nemov1alpha1.NemoGuardrails, in *Inputs) error {
	if in.bindingConflict != nil {
		return in.bindingConflict
	}
	return k.bundle().Write(ctx, cr, bundleName(cr.Name), map[string]string{"app": cr.Name, "app.kubernetes.io/component": "ca-bundle"}, in.trust, in.stored)
}

// Finish implements release.Finisher: with auth, the proxy's
// ClusterRoleBinding, once the release's objects (its ServiceAccount among
// them) passed the gate; without, none.
func (k *Kind) Finish(ctx context.Context, cr *nemov1alpha1.NemoGuardrails, in *Inputs) (any, error) {
	if !authRequired(cr) {
		if in.binding == nil {
			return nil, nil
		}
		return nil, proxybinding.Delete(ctx, k.APIReader, k.Client, binding(cr))
	}
	return nil, proxybinding.Ensure(ctx, k.Client, binding(cr), in.binding)
}

// Cleanup implements release.Preparer.
func (k *Kind) Cleanup(ctx context.Context, cr *nemov1alpha1.NemoGuardrails) error {
	if err := proxybinding.Delete(ctx, k.APIReader, k.Client, binding(cr)); err != nil {
		return err
	}
	return k.bundle().Delete(ctx, cr, bundleName(cr.Name))
}

// ConfigMapRefs implements release.ConfigMapReader: the configurations'
// ConfigMaps, the user's CA ConfigMap and Open Data Hub's bundle.
func (*Kind) ConfigMapRefs(cr *nemov1alpha1.NemoGuardrails) []string {
	refs := []string{cr.Namespace + "/" + trust.ODHBundle}
	for _, c := range cr.Spec.NemoConfigs {
		for _, name := range c.ConfigMaps {
			refs = append(refs, cr.Namespace+"/"+name)
		}
	}
	if c := cr.Spec.CABundleConfig; c != nil {
		ns := c.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+c.ConfigMapName)
	}
	return refs
}

// SharedConfigMaps implements release.ConfigMapReader: the operator's
// settings and upstream's ConfigMap.
func (k *Kind) SharedConfigMaps() []string {
	return k.SharedConfigMapsWith(trustyaifamily.UpstreamConfigMap)
}

// Recheck implements release.Rechecker: Routes are not watched, so while
// no router has admitted the CR's Route it is looked at again, first after
// 10 s and then at intervals that grow with the time it has waited (a
// cluster with the Route API and no router is not polled every 10 s for
// ever), up to the reconcile period.
func (*Kind) Recheck(cr *nemov1alpha1.NemoGuardrails) time.Duration {
	c := meta.FindStatusCondition(cr.Status.Conditions, TypeRouteReady)
	if c == nil || c.Status == metav1.ConditionTrue {
		return 0
	}
	return release.Backoff(time.Since(c.LastTransitionTime.Time))
}

// binding is the proxy's ClusterRoleBinding of the CR: ClusterRole
// ai-stack-operator-trustyai-proxy (system:auth-delegator's token and access
// reviews, which upstream binds) for ServiceAccount <name>-serviceaccount.
func binding(cr *nemov1alpha1.NemoGuardrails) proxybinding.Binding {
	labels := map[string]string{
		release.LabelManaged:        "true",
		labelOwnerNamespace:         cr.Namespace,
		labelOwnerName:              cr.Name,
		release.LabelOwnerKind:      nemov1alpha1.Kind,
		release.LabelOwnerNamespace: cr.Namespace,
		release.LabelOwnerUID:       string(cr.UID),
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: cr.Namespace, Name: serviceAccountName(cr.Name)}
	owner := []string{release.LabelManaged, labelOwnerNamespace, labelOwnerName, release.LabelOwnerKind}
	return proxybinding.Labelled(bindingName(cr.Name, cr.Namespace), trustyaifamily.ProxyClusterRole, sa, labels, owner, nemov1alpha1.Kind, "config/rbac/trustyai_proxy_role.yaml")
}

// Labels of the proxy binding: whose it is.
const (
	labelOwnerNamespace = "trustyai.opendatahub.io/owner-namespace"
	labelOwnerName      = "trustyai.opendatahub.io/owner-name"
)
