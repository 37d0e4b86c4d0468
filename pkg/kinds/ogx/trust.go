package ogx

import (
	"context"
	"fmt"
	"slices"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// bundle is the I/O of the CR's merged CA bundle.
func (k *Kind) bundle() cabundle.Store {
	return k.Bundle(ogxv1beta1.GroupVersion.WithKind(ogxv1beta1.Kind))
}

// trustRequest is what applies to a CR: the ConfigMap keys of
// spec.tls.trust.caCertificates (one reference per ConfigMap, in order),
// Open Data Hub's bundle of the namespace, OpenShift's injected ConfigMaps,
// and the public roots, so that public endpoints stay trusted.
func trustRequest(cr *ogxv1beta1.OGXServer, sources trustSources, stored *cabundle.Stored, conflict error) trust.Request {
	req := trust.Request{Namespace: cr.Namespace, PublicRoots: true, Conflict: conflict}
	if tc := cr.Spec.TLS; tc != nil && tc.Trust != nil {
		index := map[string]int{}
		for i, ref := range tc.Trust.CACertificates {
			j, ok := index[ref.Name]
			if !ok {
				j = len(req.AlsoExplicit)
				index[ref.Name] = j
				req.AlsoExplicit = append(req.AlsoExplicit, trust.Reference{Field: fmt.Sprintf("spec.tls.trust.caCertificates[%d]", i), Name: ref.Name, NameField: "name"})
			}
			if !slices.Contains(req.AlsoExplicit[j].Keys, ref.Key) {
				req.AlsoExplicit[j].Keys = append(req.AlsoExplicit[j].Keys, ref.Key)
			}
		}
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
func (k *Kind) Prepare(ctx context.Context, cr *ogxv1beta1.OGXServer, in *Inputs) error {
	if err := k.protectClaim(ctx, in.adoption); err != nil {
		return err
	}
	labels := map[string]string{"app.kubernetes.io/instance": naming.ChildName(cr.Name, ""), "app.kubernetes.io/component": "ca-bundle"}
	return k.bundle().Write(ctx, cr, bundleName(cr.Name), labels, in.trust, in.stored)
}

// Cleanup implements release.Preparer: the bundle ConfigMap goes with the CR.
func (k *Kind) Cleanup(ctx context.Context, cr *ogxv1beta1.OGXServer) error {
	k.servers().Forget(cr.UID)
	k.setWaiting(cr.UID, false)
	return k.bundle().Delete(ctx, cr, bundleName(cr.Name))
}
