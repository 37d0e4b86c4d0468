package llamastack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// Inputs are what Gather reads for one CR.
type Inputs struct {
	settings Settings
	values   valuesInputs
	// trust is the outcome of the CA sources; zero offline.
	trust trust.Outcome
	// stored is the CA bundle ConfigMap as it is now, nil when absent or not
	// the operator's (Prepare updates it).
	stored *cabundle.Stored
}

// Gather implements release.Kind: the operator's settings, the platform, the
// CA sources, the run configuration's content and the claimed storage.
// Read-only: what the user owns is never written.
func (k *Kind) Gather(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution) (*Inputs, error) {
	data, err := k.SettingsData(ctx)
	if err != nil {
		return nil, fmt.Errorf("read operator settings: %w", err)
	}
	upstream, err := k.OperatorConfigMapData(ctx, UpstreamConfigMap)
	if err != nil {
		return nil, fmt.Errorf("read upstream's operator settings: %w", err)
	}
	s, err := ParseSettings(distributions.Default(), k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	caps, err := k.Capabilities()
	if err != nil {
		return nil, err
	}
	in := k.inputs(cr, s, caps)
	g, err := k.bundle().Gather(ctx, cr, bundleName(cr.Name), func(stored *cabundle.Stored, conflict error) trust.Request {
		return trustRequest(cr, s, in.values.TrustSources, stored, conflict)
	})
	if err != nil {
		return nil, err
	}
	in.trust, in.stored = g.Outcome, g.Stored
	if g.Conflict != nil {
		return in, g.Conflict
	}
	if g.MountHash != "" {
		in.values.Trust = mountedTrust{ConfigMapName: bundleName(cr.Name), Hash: g.MountHash}
	}
	if in.values.UserConfigHash, err = k.userConfigHash(ctx, cr); err != nil {
		return nil, err
	}
	if cr.Spec.Server.Storage != nil {
		pvc, err := release.GetOptional(ctx, k.Client, cr.Namespace, claimName(cr.Name), &corev1.PersistentVolumeClaim{})
		if err != nil {
			return nil, err
		}
		if pvc != nil {
			if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				in.values.ClaimedStorage = &q
			}
		}
	}
	return in, nil
}

// OfflineInputs implements release.Offline: the embedded table, the
// environment and the settings render was given, no CA bundle.
func (k *Kind) OfflineInputs(cr *llamav1alpha1.LlamaStackDistribution, caps release.Capabilities) (*Inputs, error) {
	// Offline, the settings are those render was given (--settings), if any.
	data, _ := k.SettingsData(context.Background())
	upstream, _ := k.OperatorConfigMapData(context.Background(), UpstreamConfigMap)
	s, err := ParseSettings(distributions.Default(), k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	return k.inputs(cr, s, caps), nil
}

// inputs are what the settings and the platform decide, online and offline.
func (k *Kind) inputs(cr *llamav1alpha1.LlamaStackDistribution, s Settings, caps release.Capabilities) *Inputs {
	p := platform.ClusterOf(caps)
	return &Inputs{settings: s, values: valuesInputs{
		Distributions:           s.Distributions,
		CommonLabels:            map[string]string{release.LabelManaged: "true"},
		Platform:                p,
		TrustSources:            trustSourcesFor(cr, p),
		NetworkPolicyDisabled:   !s.NetworkPolicy,
		AnyUID:                  s.AnyUID,
		OperatorNamespace:       k.OperatorNamespace,
		ProgressDeadlineSeconds: s.ProgressDeadlineSeconds,
	}}
}

// userConfigHash reads userConfig's ConfigMap and hashes its content.
func (k *Kind) userConfigHash(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution) (string, error) {
	uc := cr.Spec.Server.UserConfig
	if uc == nil || (uc.ConfigMapNamespace != "" && uc.ConfigMapNamespace != cr.Namespace) {
		return "", nil // a cross-namespace reference is refused by the translation
	}
	cm, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, uc.ConfigMapName, &corev1.ConfigMap{})
	if err != nil {
		return "", err
	}
	return userConfigHashOf(cr, cm)
}

// userConfigHashOf is the content hash of userConfig's ConfigMap (nil when
// it does not exist), or why it cannot be used.
func userConfigHashOf(cr *llamav1alpha1.LlamaStackDistribution, cm *corev1.ConfigMap) (string, error) {
	name := cr.Spec.Server.UserConfig.ConfigMapName
	if cm == nil {
		return "", &status.Failure{Reason: "UserConfigNotFound", Field: "spec.server.userConfig.configMapName", Message: fmt.Sprintf("ConfigMap %s/%s does not exist; create it (key config.yaml) or correct the name", cr.Namespace, name)}
	}
	if _, ok := cm.Data["config.yaml"]; !ok {
		if _, ok := cm.BinaryData["config.yaml"]; !ok {
			keys := slices.Sorted(maps.Keys(cm.Data))
			return "", &status.Failure{Reason: "UserConfigInvalid", Field: "spec.server.userConfig.configMapName", Message: fmt.Sprintf("ConfigMap %s/%s has no key config.yaml (it has: %s); the server reads its run configuration from that key", cr.Namespace, name, strings.Join(keys, ", "))}
		}
	}
	return trust.ContentHash(cm.Data, cm.BinaryData), nil
}
