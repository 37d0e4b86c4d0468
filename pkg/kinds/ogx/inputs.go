package ogx

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/configgen"
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
	// stored is the CA bundle ConfigMap as it is now (Prepare updates it).
	stored *cabundle.Stored
	// configFailure is why the configuration could not be generated; the
	// rest of the inputs are gathered, for the status.
	configFailure *status.Failure
	// adoption is what the adoption annotations found (adopt.go).
	adoption adoption
}

// Gather implements release.Kind: the operator's settings, the platform,
// the CA sources, the configuration's ConfigMaps and the claimed storage.
// Read-only: what the user owns is never written.
func (k *Kind) Gather(ctx context.Context, cr *ogxv1beta1.OGXServer) (*Inputs, error) {
	data, err := k.SettingsData(ctx)
	if err != nil {
		return nil, fmt.Errorf("read operator settings: %w", err)
	}
	upstream, err := k.OperatorConfigMapData(ctx, UpstreamConfigMap)
	if err != nil {
		return nil, fmt.Errorf("read upstream's operator settings: %w", err)
	}
	s, err := ParseSettings(k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	caps, err := k.Capabilities()
	if err != nil {
		return nil, err
	}
	in := k.inputs(cr, s, caps)
	g, err := k.bundle().Gather(ctx, cr, bundleName(cr.Name), func(stored *cabundle.Stored, conflict error) trust.Request {
		return trustRequest(cr, in.values.TrustSources, stored, conflict)
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
	if in.adoption, err = k.gatherAdoption(ctx, cr, time.Now()); err != nil {
		return nil, err
	}
	k.setWaiting(cr.UID, in.adoption.Waiting)
	in.values.Adoption = adoptionValues{Claim: in.adoption.Claim, Waiting: in.adoption.Waiting, ServiceAlias: in.adoption.ServiceAlias}
	spec := cr.Spec
	switch {
	case spec.OverrideConfig != nil:
		content, err := k.readKey(ctx, cr.Namespace, "spec.overrideConfig", spec.OverrideConfig, "OverrideConfigInvalid")
		if err != nil {
			return in, err
		}
		in.values.OverrideHash = hashOf(content)
		in.values.OverrideServesTLS = servesTLS(content)
	case configgen.Active(&spec):
		base, source := baseOf(spec.Distribution.Name), baseFromDistribution
		if spec.Distribution.Image != "" {
			base = nil
		}
		if spec.BaseConfig != nil {
			if base, err = k.readKey(ctx, cr.Namespace, "spec.baseConfig", spec.BaseConfig, ogxv1beta1.ReasonConfigGenerationFailed); err != nil {
				return in, in.failConfig(err)
			}
			source = baseFromConfigMap
		}
		if base == nil {
			return in, in.failConfig(noBase(cr))
		}
		if in.values.Generated, err = generate(cr, base, source); err != nil {
			return in, in.failConfig(err)
		}
	}
	if tc := spec.TLS; tc != nil && tc.Identity != nil {
		content, err := k.readKey(ctx, cr.Namespace, "spec.tls.identity.cert", &tc.Identity.Cert, "IdentityInvalid")
		if err != nil {
			return in, err
		}
		in.values.IdentityHash = hashOf(content)[:16]
	}
	if w := spec.Workload; w != nil && w.Storage != nil {
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

// failConfig remembers a configuration failure for the status and returns it.
func (in *Inputs) failConfig(err error) error {
	var f *status.Failure
	if errors.As(err, &f) {
		in.configFailure = f
	}
	return err
}

// OfflineInputs implements release.Offline: the settings render was given,
// the embedded base configurations, no CA bundle and no ConfigMap content
// (a configuration read from a ConfigMap is mounted, not read, offline).
func (k *Kind) OfflineInputs(cr *ogxv1beta1.OGXServer, caps release.Capabilities) (*Inputs, error) {
	data, _ := k.SettingsData(context.Background())
	upstream, _ := k.OperatorConfigMapData(context.Background(), UpstreamConfigMap)
	s, err := ParseSettings(k.Env(), data, upstream)
	if err != nil {
		return nil, err
	}
	in := k.inputs(cr, s, caps)
	if spec := cr.Spec; spec.OverrideConfig == nil && configgen.Active(&spec) && spec.BaseConfig != nil {
		return in, &status.Failure{Reason: ogxv1beta1.ReasonConfigGenerationFailed, Field: "spec.baseConfig", Message: "an offline render reads no ConfigMap of the CR's namespace, so the configuration generated on spec.baseConfig is made on the cluster only"}
	} else if spec.OverrideConfig == nil && configgen.Active(&spec) {
		base := baseOf(spec.Distribution.Name)
		if spec.Distribution.Image != "" || base == nil {
			return in, noBase(cr)
		}
		if in.values.Generated, err = generate(cr, base, baseFromDistribution); err != nil {
			return in, err
		}
	}
	return in, nil
}

// inputs are what the settings and the platform decide, online and offline.
func (k *Kind) inputs(cr *ogxv1beta1.OGXServer, s Settings, caps release.Capabilities) *Inputs {
	p := platform.ClusterOf(caps)
	return &Inputs{settings: s, values: valuesInputs{
		Distributions:           s.Distributions,
		CommonLabels:            map[string]string{release.LabelManaged: "true"},
		Platform:                p,
		TrustSources:            trustSources{ServiceCA: p.OpenShift, ClusterTrustedCA: p.OpenShift},
		AnyUID:                  s.AnyUID,
		OperatorNamespace:       k.OperatorNamespace,
		ProgressDeadlineSeconds: s.ProgressDeadlineSeconds,
	}}
}
