package evalhub

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/proxybinding"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

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
