package llamastack

import (
	"context"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind))
}

// trustRequest is what applies to a CR: its caBundle, the injected
// ConfigMaps the chart renders on OpenShift, the public roots, and whether
// the bundle's own name is free (stored is the operator's bundle, conflict
// the error when a ConfigMap of that name is someone else's).
func trustRequest(cr *llamav1alpha1.LlamaStackDistribution, s Settings, sources trustSources, stored *cabundle.Stored, conflict error) trust.Request {
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
		req.LastGood = stored.Hash
	}
	return req
}

// Prepare implements release.Preparer: the bundle ConfigMap holds the merged
// bundle before the chart that mounts it is applied, and is removed when no
// CA source applies any more. On a failed merge the last good bundle stays.
func (k *Kind) Prepare(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, in *Inputs) error {
	labels := map[string]string{"app.kubernetes.io/instance": naming.ChildName(cr.Name, ""), "app.kubernetes.io/component": "ca-bundle"}
	return k.bundle().Write(ctx, cr, bundleName(cr.Name), labels, in.trust, in.stored)
}

// Cleanup implements release.Preparer: the operator's bundle ConfigMap goes
// with the CR.
func (k *Kind) Cleanup(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution) error {
	k.servers().Forget(cr.UID)
	return k.bundle().Delete(ctx, cr, bundleName(cr.Name))
}
