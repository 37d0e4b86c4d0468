package evalhub

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/proxybinding"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// Labels of the provider and collection definitions (upstream's): type
// "system" in the operator's namespace, copied for each EvalHub that lists
// them; type "tenant" in an EvalHub's namespace, mounted as they are.
const (
	LabelProviderType     = "trustyai.opendatahub.io/evalhub-provider-type"
	LabelProviderName     = "trustyai.opendatahub.io/evalhub-provider-name"
	LabelCollectionType   = "trustyai.opendatahub.io/evalhub-collection-type"
	LabelCollectionName   = "trustyai.opendatahub.io/evalhub-collection-name"
	definitionTypeSystem  = "system"
	definitionTypeTenant  = "tenant"
	openShiftServiceCAMap = "openshift-service-ca.crt"
)

// Kind is EvalHub for the release reconciler.
type Kind struct {
	release.Deps
}

var (
	_ release.Kind[*evalhubv1.EvalHub, *Inputs]     = (*Kind)(nil)
	_ release.Preparer[*evalhubv1.EvalHub, *Inputs] = (*Kind)(nil)
	_ release.ConfigMapReader[*evalhubv1.EvalHub]   = (*Kind)(nil)
	_ release.Offline[*evalhubv1.EvalHub, *Inputs]  = (*Kind)(nil)
	_ release.Finisher[*evalhubv1.EvalHub, *Inputs] = (*Kind)(nil)
)

// Meta implements release.Kind.
func (*Kind) Meta() release.Meta { return Meta() }

// Meta describes EvalHub to the reconciler. Routes, ServiceMonitors and
// cert-manager's objects are optional APIs and not watched; drift on them
// is repaired on the next reconcile.
func Meta() release.Meta {
	return release.Meta{
		GVK:               evalhubv1.GroupVersion.WithKind(evalhubv1.Kind),
		NewObject:         func() client.Object { return &evalhubv1.EvalHub{} },
		NewList:           func() client.ObjectList { return &evalhubv1.EvalHubList{} },
		Chart:             Chart,
		ReleasePrefix:     ReleasePrefix,
		RelatedImages:     map[string]string{EnvImage: DefaultImage, trustyaifamily.EnvProxyImage: trustyaifamily.DefaultProxyImage},
		OwnedTypes:        []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}},
		OptionalAPIs:      []schema.GroupVersionKind{platform.Route, platform.SCC, platform.Certificate, platform.ServiceMonitor},
		WarningConditions: []string{status.TypeTrustReady, TypeProvidersReady, TypeCollectionsReady, TypeTenantsReady},
		// A Namespace labelled a tenant, or no longer: every EvalHub looks
		// at its grants again.
		NamespaceWatches: []release.NamespaceWatch{{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), Selector: LabelTenant}},
		// The proxy's ClusterRoleBinding and the grants (in tenants they
		// carry no owner reference): swept when the EvalHub is gone or
		// (Reaches) no longer reaches their namespace.
		OutsideTypes: []schema.GroupVersionKind{
			rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
			corev1.SchemeGroupVersion.WithKind("ServiceAccount"), corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		},
	}
}

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(evalhubv1.GroupVersion.WithKind(evalhubv1.Kind))
}

// Values implements release.Kind.
func (k *Kind) Values(cr *evalhubv1.EvalHub, in *Inputs) (map[string]any, error) {
	return release.ValuesOf(translate(cr, in.values))
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *evalhubv1.EvalHub) []metav1.Condition {
	return cr.Status.Conditions
}

// Prepare implements release.Preparer: the merged CA bundle, which the
// chart mounts, before the chart is applied; a proxy binding of the CR's
// name that is not the operator's stops the CR first.
func (k *Kind) Prepare(ctx context.Context, cr *evalhubv1.EvalHub, in *Inputs) error {
	if in.bindingConflict != nil {
		return in.bindingConflict
	}
	return k.bundle().Write(ctx, cr, bundleName(cr.Name), map[string]string{"app": "eval-hub", "instance": cr.Name, "component": "ca-bundle"}, in.trust, in.stored)
}

// Finish implements release.Finisher, once the release's objects (the
// server's ServiceAccount among them) passed the gate: the proxy's
// ClusterRoleBinding (token and access reviews), and the grants in the
// CR's namespace and its tenants'.
func (k *Kind) Finish(ctx context.Context, cr *evalhubv1.EvalHub, in *Inputs) (any, error) {
	if err := proxybinding.Ensure(ctx, k.Client, binding(cr), in.binding); err != nil {
		return nil, err
	}
	bundle, err := k.mlflowBundleData(ctx, cr, in)
	if err != nil {
		return nil, err
	}
	res, err := k.syncGrants(ctx, cr, in.tenants, grantObjects(cr, in.tenants, bundle, in.values.Settings.TenantSecrets))
	if err != nil {
		return nil, err
	}
	res.Tenants = in.tenants
	return res, nil
}

// Cleanup implements release.Preparer: the grants in every namespace, the
// proxy's binding and the CA bundle.
func (k *Kind) Cleanup(ctx context.Context, cr *evalhubv1.EvalHub) error {
	if err := k.deleteGrants(ctx, cr); err != nil {
		return err
	}
	if err := proxybinding.Delete(ctx, k.APIReader, k.Client, binding(cr)); err != nil {
		return err
	}
	return k.bundle().Delete(ctx, cr, bundleName(cr.Name))
}

// binding is the proxy's ClusterRoleBinding of the CR: ClusterRole
// ai-stack-operator-trustyai-proxy (token and access reviews, upstream's
// auth-reviewer role) for ServiceAccount <name>-service.
func binding(cr *evalhubv1.EvalHub) proxybinding.Binding {
	labels := map[string]string{
		release.LabelManaged:        "true",
		labelOwnerName:              naming.NameLabel(cr.Name),
		release.LabelOwnerKind:      evalhubv1.Kind,
		release.LabelOwnerNamespace: cr.Namespace,
		release.LabelOwnerUID:       string(cr.UID),
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: cr.Namespace, Name: serviceAccountName(cr.Name)}
	owner := []string{release.LabelManaged, release.LabelOwnerNamespace, labelOwnerName, release.LabelOwnerKind}
	return proxybinding.Labelled(bindingName(cr.Name, cr.Namespace), trustyaifamily.ProxyClusterRole, sa, labels, owner, evalhubv1.Kind, "config/rbac/trustyai_proxy_role.yaml")
}

// ConfigMapRefs implements release.ConfigMapReader: the MLflow CA
// ConfigMap, Open Data Hub's bundle and OpenShift's service CA.
func (*Kind) ConfigMapRefs(cr *evalhubv1.EvalHub) []string {
	refs := []string{cr.Namespace + "/" + trust.ODHBundle, cr.Namespace + "/" + openShiftServiceCAMap}
	if ref := cr.Spec.MLFlow; ref != nil && ref.TLS != nil && ref.TLS.CABundle != nil {
		refs = append(refs, cr.Namespace+"/"+ref.TLS.CABundle.Name)
	}
	return refs
}

// SharedConfigMaps implements release.ConfigMapReader: the operator's
// settings and upstream's ConfigMap.
func (k *Kind) SharedConfigMaps() []string {
	return k.SharedConfigMapsWith(trustyaifamily.UpstreamConfigMap)
}
