package trustyai

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// Inputs are what Gather reads for one CR.
type Inputs struct {
	values valuesInputs
	// trust is the outcome of the CA sources; zero offline.
	trust trust.Outcome
	// stored is the CA bundle ConfigMap as it is now, nil when absent or not
	// the operator's (Prepare updates it).
	stored *cabundle.Stored
	// binding is the operator's proxy ClusterRoleBinding of the CR as
	// Gather read it; nil when there is none. bindingConflict is set when a
	// binding of its name is not the operator's: Prepare stops the CR with it
	// before anything is applied.
	binding         *rbacv1.ClusterRoleBinding
	bindingConflict error
	// dbCAUnknown: the operator may not read Secrets in the CR's namespace,
	// so whether <name>-db-ca exists is unknown (it is taken as absent).
	dbCAUnknown bool
}

// Gather implements release.Kind: the operator's settings, the platform, the
// CA sources, whether <name>-db-ca exists, and the claimed storage.
// Read-only: what the user owns is never written.
func (k *Kind) Gather(ctx context.Context, cr *trustyv1.TrustyAIService) (*Inputs, error) {
	data, upstream, err := trustyaifamily.SettingsData(ctx, k.Deps)
	if err != nil {
		return nil, err
	}
	s, err := ParseSettings(k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	caps, err := k.Capabilities()
	if err != nil {
		return nil, err
	}
	in := inputs(s, caps)

	g, err := k.bundle().Gather(ctx, cr, bundleName(cr.Name), func(stored *cabundle.Stored, conflict error) trust.Request {
		return trustRequest(cr, in.values.Platform, stored, conflict)
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

	if cr.Spec.Storage.Format == trustyv1.StorageDatabase {
		// Its metadata only, by name: the operator never reads a Secret's data.
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := k.APIReader.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: dbCAName(cr.Name)}, meta)
		switch {
		case err == nil:
			in.values.DatabaseCA = true
		case apierrors.IsForbidden(err):
			// The operator holds no cluster-wide Secret permission; an
			// administrator grants this read per namespace
			// (docs/trustyai.md). Without it the service connects without
			// the CA, as when the Secret is absent, and says so.
			in.dbCAUnknown = true
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("look for Secret %s: %w", dbCAName(cr.Name), err)
		}
	}
	if in.values.SidecarClients, err = k.sidecarClients(ctx, cr.Namespace, in.values.Platform, s.Serverless); err != nil {
		return nil, err
	}
	if usesClaim(cr) {
		pvc := &corev1.PersistentVolumeClaim{}
		err := k.Client.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: claimName(cr.Name)}, pvc)
		switch {
		case err == nil:
			if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				in.values.ClaimedStorage = &q
			}
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("read PersistentVolumeClaim: %w", err)
		}
	}
	var failure *status.Failure
	switch in.binding, err = k.readProxyBinding(ctx, cr); {
	case errors.As(err, &failure):
		in.bindingConflict = failure
	case err != nil:
		return nil, err
	}
	return in, nil
}

// OfflineInputs implements release.Offline: the default images (and
// RELATED_IMAGE_ variables), the settings ConfigMaps render was given
// (--settings; ours and upstream's), no CA bundle.
func (k *Kind) OfflineInputs(_ *trustyv1.TrustyAIService, caps release.Capabilities) (*Inputs, error) {
	data, _ := k.SettingsData(context.Background())
	upstream, _ := k.OperatorConfigMapData(context.Background(), trustyaifamily.UpstreamConfigMap)
	s, err := ParseSettings(k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	in := inputs(s, caps)
	// No InferenceService to read: Istio's APIs given stand for a model
	// server with a sidecar, so that the render shows the mesh's routes.
	in.values.SidecarClients = meshRoutes(in.values.Platform)
	return in, nil
}

func inputs(s Settings, caps release.Capabilities) *Inputs {
	return &Inputs{values: valuesInputs{Settings: s, Platform: platform.ClusterOf(caps), CommonLabels: map[string]string{release.LabelManaged: "true"}}}
}

// trustRequest is what applies to a CR: Open Data Hub's bundle, on OpenShift
// the injected service CA and cluster trust, and the public roots (the
// bundle replaces the JVM's and the proxy's trust stores).
func trustRequest(cr *trustyv1.TrustyAIService, p platform.Cluster, stored *cabundle.Stored, conflict error) trust.Request {
	req := trust.Request{Namespace: cr.Namespace, PublicRoots: true, Conflict: conflict}
	if p.OpenShift {
		req.Injected = []string{serviceCAName(cr.Name), trustedCAName(cr.Name)}
	}
	if stored != nil {
		req.LastGood = stored.Hash
	}
	return req
}
