package llamastack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// bundleOwnership describes the bundle ConfigMap the operator writes for a CR.
func bundleOwnership(cr *llamav1alpha1.LlamaStackDistribution) guard.Ownership {
	return guard.Ownership{Label: release.LabelManaged, Owner: llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind).GroupKind(), Namespace: cr.Namespace, Name: cr.Name}
}

// trustRequest is what applies to a CR: its caBundle, the injected
// ConfigMaps the chart renders on OpenShift, the public roots, and whether
// the bundle's own name is free (stored is the operator's bundle, conflict
// the error when a ConfigMap of that name is someone else's).
func trustRequest(cr *llamav1alpha1.LlamaStackDistribution, s Settings, sources trustSources, stored *corev1.ConfigMap, conflict error) trust.Request {
	req := trust.Request{
		Namespace:             cr.Namespace,
		CrossNamespace:        s.CrossNamespaceCABundles,
		CrossNamespaceSetting: KeyCrossNamespaceCABundles,
		PublicRoots:           sources.PublicRoots,
		PublicRootsField:      "spec.server.tlsConfig.publicRoots",
		Conflict:              conflict,
	}
	if tc := cr.Spec.Server.TLSConfig; tc != nil && tc.CABundle != nil {
		req.Explicit = &trust.Reference{Field: "spec.server.tlsConfig.caBundle", Namespace: tc.CABundle.ConfigMapNamespace, Name: tc.CABundle.ConfigMapName, Keys: tc.CABundle.ConfigMapKeys}
	}
	if sources.ServiceCA {
		req.Injected = append(req.Injected, serviceCAName(cr.Name))
	}
	if sources.ClusterTrustedCA {
		req.Injected = append(req.Injected, trustedCAName(cr.Name))
	}
	if stored != nil {
		req.LastGood = trust.ContentHash(stored.Data, stored.BinaryData)
	}
	return req
}

// gatherTrust reads the bundle ConfigMap and the CA sources of a CR and
// merges them. Problems the user fixes are in the outcome; API errors are
// returned.
func (k *Kind) gatherTrust(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, s Settings, sources trustSources) (trust.Outcome, *corev1.ConfigMap, error) {
	name := bundleName(cr.Name)
	stored, err := getOptional(ctx, k.APIReader, cr.Namespace, name, &corev1.ConfigMap{})
	if err != nil {
		return trust.Outcome{}, nil, err
	}
	var conflict error
	if stored != nil {
		// A ConfigMap of the bundle's name that the operator did not write is
		// the user's: it is neither mounted, nor overwritten, nor deleted.
		if conflict = bundleOwnership(cr).Check("ConfigMap "+cr.Namespace+"/"+name, stored.Labels, stored.Annotations, stored.OwnerReferences); conflict != nil {
			stored = nil
		}
	}
	out, err := trust.Resolve(trustRequest(cr, s, sources, stored, conflict), func(ns, name string) (*trust.ConfigMap, error) {
		cm, err := getOptional(ctx, k.APIReader, ns, name, &corev1.ConfigMap{})
		if err != nil || cm == nil {
			return nil, err
		}
		return &trust.ConfigMap{Data: cm.Data, BinaryData: cm.BinaryData}, nil
	})
	return out, stored, err
}

// Prepare implements release.Preparer: the bundle ConfigMap holds the merged
// bundle before the chart that mounts it is applied, and is removed when no
// CA source applies any more. On a failed merge the last good bundle stays.
func (k *Kind) Prepare(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, in *Inputs) error {
	t, stored, name := in.trust, in.stored, bundleName(cr.Name)
	switch {
	case t.Bundle != nil:
		want := map[string]string{trust.BundleKey: string(t.Bundle.PEM)}
		if stored != nil && maps.Equal(stored.Data, want) && len(stored.BinaryData) == 0 && metav1.IsControlledBy(stored, cr) {
			return nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: name}}
		if stored != nil {
			cm = stored.DeepCopy()
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[release.LabelManaged] = "true"
		cm.Labels["app.kubernetes.io/instance"] = naming.ChildName(cr.Name, "")
		cm.Labels["app.kubernetes.io/component"] = "ca-bundle"
		cm.Data, cm.BinaryData = want, nil
		ref := metav1.NewControllerRef(cr, llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind))
		cm.OwnerReferences = []metav1.OwnerReference{*ref}
		var err error
		if stored == nil {
			err = k.Client.Create(ctx, cm)
		} else {
			err = k.Client.Update(ctx, cm)
		}
		if err != nil {
			return fmt.Errorf("write CA bundle ConfigMap %s: %w", name, err)
		}
		k.Recorder.Eventf(cr, corev1.EventTypeNormal, "CABundleUpdated", "ConfigMap %s holds %d certificates merged from %s", name, t.Bundle.Certificates, strings.Join(t.Sources, ", "))
		if len(t.Bundle.Warnings) > 0 {
			k.Recorder.Eventf(cr, corev1.EventTypeWarning, "CABundleWarnings", "%s", trust.Summary(t.Bundle.Warnings))
		}
	case !t.Wanted && stored != nil:
		if err := k.Client.Delete(ctx, stored, client.Preconditions{UID: &stored.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove CA bundle ConfigMap %s: %w", name, err)
		}
	}
	return nil
}

// Cleanup implements release.Preparer: the bundle ConfigMap is not part of
// the Helm release, so uninstalling removes it here (a garbage collector
// would follow its owner reference, but not every cluster runs one in time).
// Only the operator's own bundle is deleted (checked, then deleted with its
// UID as a precondition); a user's ConfigMap of that name is left alone.
func (k *Kind) Cleanup(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution) error {
	name := bundleName(cr.Name)
	cm, err := getOptional(ctx, k.APIReader, cr.Namespace, name, &corev1.ConfigMap{})
	if err != nil || cm == nil {
		return err
	}
	if err := bundleOwnership(cr).Check("ConfigMap "+cr.Namespace+"/"+name, cm.Labels, cm.Annotations, cm.OwnerReferences); err != nil {
		return nil
	}
	return client.IgnoreNotFound(k.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}))
}

// SharedConfigMaps implements release.ConfigMapReader: the settings ConfigMap.
func (k *Kind) SharedConfigMaps() []string {
	if k.SettingsConfigMap == "" || k.OperatorNamespace == "" {
		return nil
	}
	return []string{k.OperatorNamespace + "/" + k.SettingsConfigMap}
}

// ConfigMapRefs implements release.ConfigMapReader: the ConfigMaps a CR
// reads, as "namespace/name"; a change to any of them reconciles the CR.
func (*Kind) ConfigMapRefs(cr *llamav1alpha1.LlamaStackDistribution) []string {
	refs := []string{cr.Namespace + "/" + trust.ODHBundle}
	if uc := cr.Spec.Server.UserConfig; uc != nil {
		ns := uc.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+uc.ConfigMapName)
	}
	if tc := cr.Spec.Server.TLSConfig; tc != nil && tc.CABundle != nil {
		ns := tc.CABundle.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+tc.CABundle.ConfigMapName)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}
