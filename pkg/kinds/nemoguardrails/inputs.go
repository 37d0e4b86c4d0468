package nemoguardrails

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
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
	// trust is the outcome of the CA sources; zero offline.
	trust trust.Outcome
	// stored is the merged bundle ConfigMap as it is now, nil when absent.
	stored *cabundle.Stored
	// binding is the operator's proxy binding as Gather read it (auth
	// only); bindingConflict stops the CR before anything is applied.
	binding         *rbacv1.ClusterRoleBinding
	bindingConflict error
}

// Gather implements release.Kind: the settings, the platform, the
// configurations' ConfigMaps (hashed; a missing one stops the CR with the
// field to fix), the CA sources and, with auth, the proxy binding.
// Read-only.
func (k *Kind) Gather(ctx context.Context, cr *nemov1alpha1.NemoGuardrails) (*Inputs, error) {
	s, err := k.settings(ctx)
	if err != nil {
		return nil, err
	}
	caps, err := k.Capabilities()
	if err != nil {
		return nil, err
	}
	in := &Inputs{values: valuesInputs{Settings: s, Platform: platform.ClusterOf(caps), CommonLabels: map[string]string{release.LabelManaged: "true"}}}
	if in.values.ConfigHash, err = k.configHash(ctx, cr); err != nil {
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
	{
		// Read without auth too: a binding left from when auth was on goes.
		in.binding, err = proxybinding.Read(ctx, k.APIReader, binding(cr))
		var failure *status.Failure
		switch {
		case errors.As(err, &failure):
			if authRequired(cr) {
				in.bindingConflict = failure
			}
		case err != nil:
			return nil, err
		}
	}
	return in, nil
}

// configHash reads the configurations' ConfigMaps and hashes their names and
// contents in spec order.
func (k *Kind) configHash(ctx context.Context, cr *nemov1alpha1.NemoGuardrails) (string, error) {
	if err := checkConfigs(cr.Spec.NemoConfigs); err != nil {
		return "", err // Values says it
	}
	h := sha256.New()
	for i, c := range cr.Spec.NemoConfigs {
		for j, name := range c.ConfigMaps {
			cm, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, name, &corev1.ConfigMap{})
			if err != nil {
				return "", fmt.Errorf("read ConfigMap %s: %w", name, err)
			}
			if cm == nil {
				return "", &status.Failure{Reason: "ConfigMapNotFound", Field: fmt.Sprintf("spec.nemoConfigs[%d].configMaps[%d]", i, j), Message: fmt.Sprintf("ConfigMap %s/%s does not exist; create it with the files of configuration %q (config.yaml, rails.co, actions.py, ...) or correct the name", cr.Namespace, name, c.Name)}
			}
			fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.Name, name, trust.ContentHash(cm.Data, cm.BinaryData))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// trustRequest: the user's caBundleConfig, Open Data Hub's bundle, on
// OpenShift the service CA injected into <name>-ca-bundle, and the public
// roots (the bundle replaces /etc/ssl/certs).
func trustRequest(cr *nemov1alpha1.NemoGuardrails, v valuesInputs, stored *cabundle.Stored, conflict error) trust.Request {
	req := trust.Request{Namespace: cr.Namespace, PublicRoots: true, Conflict: conflict,
		CrossNamespace: v.Settings.CrossNamespaceCABundles, CrossNamespaceSetting: KeyCrossNamespaceCABundles}
	if c := cr.Spec.CABundleConfig; c != nil {
		req.Explicit = &trust.Reference{Field: "spec.caBundleConfig", Namespace: c.ConfigMapNamespace, Name: c.ConfigMapName, Keys: c.ConfigMapKeys}
	}
	if v.Platform.OpenShift {
		req.Injected = []string{serviceCAName(cr.Name)}
	}
	if stored != nil {
		req.LastGood = stored.Hash
	}
	return req
}

// OfflineInputs implements release.Offline: the default images, the
// settings render was given, no CA bundle, no ConfigMap read.
func (k *Kind) OfflineInputs(_ *nemov1alpha1.NemoGuardrails, caps release.Capabilities) (*Inputs, error) {
	data, _ := k.SettingsData(context.Background())
	upstream, _ := k.OperatorConfigMapData(context.Background(), trustyaifamily.UpstreamConfigMap)
	s, err := ParseSettings(k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	return &Inputs{values: valuesInputs{Settings: s, Platform: platform.ClusterOf(caps), CommonLabels: map[string]string{release.LabelManaged: "true"}}}, nil
}
