package evalhub

import (
	"context"
	"errors"
	"fmt"
	"sort"

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

// Inputs are what Gather reads for one CR.
type Inputs struct {
	values valuesInputs
	// missingProviders and missingCollections are the indexes of the
	// spec's names without a definition.
	missingProviders, missingCollections []int
	// trust is the outcome of the CA sources; zero offline.
	trust trust.Outcome
	// stored is the merged bundle ConfigMap as it is now, nil when absent.
	stored *cabundle.Stored
	// tenants are the namespaces the CR is granted besides its own.
	tenants []string
	// binding is the proxy's ClusterRoleBinding as Gather read it;
	// bindingConflict stops the CR before anything is applied.
	binding         *rbacv1.ClusterRoleBinding
	bindingConflict error
}

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(evalhubv1.GroupVersion.WithKind(evalhubv1.Kind))
}

// settings reads the operator's settings and upstream's ConfigMap.
func (k *Kind) settings(ctx context.Context) (Settings, error) {
	data, err := k.SettingsData(ctx)
	if err != nil {
		return Settings{}, fmt.Errorf("read operator settings: %w", err)
	}
	upstream, err := k.OperatorConfigMapData(ctx, trustyaifamily.UpstreamConfigMap)
	if err != nil {
		return Settings{}, fmt.Errorf("read upstream's ConfigMap %s: %w", trustyaifamily.UpstreamConfigMap, err)
	}
	return ParseSettings(k.Env(), data, upstream, k.OperatorNamespace)
}

// Gather implements release.Kind: the settings, the platform, the
// definitions of the providers and collections the spec lists (in the
// operator's namespace) and the namespace's own, and the MLflow CA
// sources. Read-only.
func (k *Kind) Gather(ctx context.Context, cr *evalhubv1.EvalHub) (*Inputs, error) {
	s, err := k.settings(ctx)
	if err != nil {
		return nil, err
	}
	caps, err := k.Capabilities()
	if err != nil {
		return nil, err
	}
	in := &Inputs{values: valuesInputs{Settings: s, Platform: platform.ClusterOf(caps), CommonLabels: map[string]string{release.LabelManaged: "true"}}}
	if in.values.Providers, in.missingProviders, err = k.definitions(ctx, cr.Spec.Providers, LabelProviderType, LabelProviderName); err != nil {
		return nil, err
	}
	if in.values.Collections, in.missingCollections, err = k.definitions(ctx, cr.Spec.Collections, LabelCollectionType, LabelCollectionName); err != nil {
		return nil, err
	}
	if in.values.TenantProviders, err = k.tenantDefinitions(ctx, cr.Namespace, LabelProviderType); err != nil {
		return nil, err
	}
	if in.values.TenantCollections, err = k.tenantDefinitions(ctx, cr.Namespace, LabelCollectionType); err != nil {
		return nil, err
	}
	if in.tenants, err = k.readTenancy(ctx, cr, s); err != nil {
		return nil, err
	}
	in.binding, err = proxybinding.Read(ctx, k.APIReader, binding(cr))
	var failure *status.Failure
	switch {
	case errors.As(err, &failure):
		in.bindingConflict = failure
	case err != nil:
		return nil, err
	}

	g, err := k.bundle().Gather(ctx, cr, bundleName(cr.Name), func(stored *cabundle.Stored, conflict error) trust.Request {
		return trustRequest(cr, in.values, stored, conflict)
	})
	if err != nil {
		return nil, err
	}
	in.trust, in.stored = g.Outcome, g.Stored
	if g.Conflict != nil {
		return in, g.Conflict
	}
	if g.MountHash != "" {
		in.values.TrustConfigMap, in.values.TrustHash = bundleName(cr.Name), g.MountHash
	}
	return in, nil
}

// definitions finds the named definitions in the operator's namespace by
// their labels (one list per kind of definition): the found ones in the
// spec's order, and the indexes of the names not found.
func (k *Kind) definitions(ctx context.Context, names []string, typeLabel, nameLabel string) ([]Definition, []int, error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	found := map[string]map[string]string{}
	if k.APIReader != nil && k.OperatorNamespace != "" {
		var list corev1.ConfigMapList
		if err := k.APIReader.List(ctx, &list, client.InNamespace(k.OperatorNamespace), client.MatchingLabels{typeLabel: definitionTypeSystem}); err != nil {
			return nil, nil, fmt.Errorf("list the definitions labelled %s=%s in %s: %w", typeLabel, definitionTypeSystem, k.OperatorNamespace, err)
		}
		// Several with one name: the first by ConfigMap name, so that the
		// choice does not depend on the order the API server lists them in.
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for _, cm := range list.Items {
			if n := cm.Labels[nameLabel]; n != "" {
				if _, ok := found[n]; !ok {
					found[n] = cm.Data
				}
			}
		}
	}
	var defs []Definition
	var missing []int
	for i, n := range names {
		data, ok := found[n]
		if !ok {
			missing = append(missing, i)
			continue
		}
		defs = append(defs, Definition{Name: n, Data: data})
	}
	return defs, missing, nil
}

// tenantDefinitions names the namespace's own definitions' ConfigMaps,
// sorted.
func (k *Kind) tenantDefinitions(ctx context.Context, namespace, typeLabel string) ([]string, error) {
	if k.APIReader == nil {
		return nil, nil
	}
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := k.APIReader.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{typeLabel: definitionTypeTenant}); err != nil {
		return nil, fmt.Errorf("list the ConfigMaps labelled %s=%s in %s: %w", typeLabel, definitionTypeTenant, namespace, err)
	}
	var out []string
	for _, cm := range list.Items {
		out = append(out, cm.Name)
	}
	sort.Strings(out)
	return out, nil
}

// trustRequest: spec.mlflow.tls.caBundle, Open Data Hub's bundle and, on
// OpenShift, the service CA OpenShift writes into every namespace
// (upstream's three sources, in its order).
func trustRequest(cr *evalhubv1.EvalHub, v valuesInputs, stored *cabundle.Stored, conflict error) trust.Request {
	req := trust.Request{Namespace: cr.Namespace, Conflict: conflict}
	if ref := cr.Spec.MLFlow; ref != nil && ref.TLS != nil && ref.TLS.CABundle != nil {
		key := ref.TLS.CABundle.Key
		if key == "" {
			key = trust.BundleKey
		}
		req.Explicit = &trust.Reference{Field: "spec.mlflow.tls.caBundle", NameField: "name", Name: ref.TLS.CABundle.Name, Keys: []string{key}}
	}
	if v.Platform.OpenShift {
		req.Injected = []string{openShiftServiceCAMap}
	}
	if stored != nil {
		req.LastGood = stored.Hash
	}
	return req
}

// OfflineInputs implements release.Offline: the default images, the
// settings render was given, no definition, no CA bundle.
func (k *Kind) OfflineInputs(_ *evalhubv1.EvalHub, caps release.Capabilities) (*Inputs, error) {
	data, _ := k.SettingsData(context.Background())
	upstream, _ := k.OperatorConfigMapData(context.Background(), trustyaifamily.UpstreamConfigMap)
	s, err := ParseSettings(k.Env(), data, upstream, k.OperatorNamespace)
	if err != nil {
		return nil, err
	}
	return &Inputs{values: valuesInputs{Settings: s, Platform: platform.ClusterOf(caps), CommonLabels: map[string]string{release.LabelManaged: "true"}}}, nil
}

// Values implements release.Kind.
func (k *Kind) Values(cr *evalhubv1.EvalHub, in *Inputs) (map[string]any, error) {
	v, err := translate(cr, in.values)
	if err != nil {
		return nil, err
	}
	return release.Values(v)
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

// Status implements release.Kind: the Deployments through the cache.
func (k *Kind) Status(ctx context.Context, cr *evalhubv1.EvalHub, in *Inputs, obs release.Observation) error {
	o := observed{
		Observed: status.Observed{Generation: cr.Generation, Failure: obs.Failure, Now: obs.Now},
		Spec:     cr.Spec, Namespace: cr.Namespace, Name: cr.Name,
	}
	if res, ok := obs.Finished.(*GrantResult); ok && res != nil {
		o.Grants = res
	}
	if in != nil {
		o.Trust = in.trust
		o.MissingProviders, o.MissingCollections = in.missingProviders, in.missingCollections
		o.Gathered = true
	}
	for _, ref := range obs.Objects {
		if ref.Kind != "Deployment" {
			continue
		}
		d, err := release.GetRendered(ctx, k.Deps, cr.Namespace, ref.Name, &appsv1.Deployment{})
		if err != nil {
			return err
		}
		if ref.Name == cr.Name {
			o.Deployment = d
		} else {
			o.MCPDeployment, o.MCPRendered = d, true
		}
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}
