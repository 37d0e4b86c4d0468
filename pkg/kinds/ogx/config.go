package ogx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/configgen"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// The server configuration of an OGXServer, in one of three modes, as
// upstream's: overrideConfig names a ConfigMap key mounted whole; otherwise
// providers, resources, storage or disabledAPIs generate one on top of a
// base (spec.baseConfig's ConfigMap key, or the distribution's own
// configuration, embedded here for the distributions that ship one);
// otherwise the image's built-in configuration runs.

//go:embed bases/*.yaml
var bases embed.FS

// baseOf is the embedded base configuration of a distribution, nil when
// none is embedded.
func baseOf(name string) []byte {
	b, err := bases.ReadFile("bases/" + name + ".yaml")
	if err != nil {
		return nil
	}
	return b
}

// Base sources, for status.resolvedDistribution.configSource.
const (
	baseFromConfigMap    = "configmap"
	baseFromDistribution = "distribution"
)

// readKey reads a ConfigMap key the CR names: nil and a Failure naming the
// field when the ConfigMap or its key is missing.
func (k *Kind) readKey(ctx context.Context, namespace, field string, ref *ogxv1beta1.ConfigMapKeyRef, reason string) ([]byte, error) {
	cm, err := release.GetOptional(ctx, k.APIReader, namespace, ref.Name, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	return keyOf(cm, namespace, field, ref, reason)
}

// keyOf is a ConfigMap key's content, or why it cannot be read.
func keyOf(cm *corev1.ConfigMap, namespace, field string, ref *ogxv1beta1.ConfigMapKeyRef, reason string) ([]byte, error) {
	if cm == nil {
		return nil, &status.Failure{Reason: reason, Field: field + ".name", Message: fmt.Sprintf("ConfigMap %s/%s does not exist; create it or correct the name", namespace, ref.Name)}
	}
	if v, ok := cm.Data[ref.Key]; ok {
		return []byte(v), nil
	}
	if v, ok := cm.BinaryData[ref.Key]; ok {
		return v, nil
	}
	keys := slices.Sorted(maps.Keys(cm.Data))
	return nil, &status.Failure{Reason: reason, Field: field + ".key", Message: fmt.Sprintf("ConfigMap %s/%s has no key %q (it has: %s)", namespace, ref.Name, ref.Key, strings.Join(keys, ", "))}
}

// hashOf is the hex SHA-256 of content.
func hashOf(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// servesTLS says whether a server configuration names a TLS pair for the
// server (server.tls_certfile and tls_keyfile): its probes then use HTTPS.
func servesTLS(config []byte) bool {
	var c struct {
		Server struct {
			CertFile string `json:"tls_certfile"`
			KeyFile  string `json:"tls_keyfile"`
		} `json:"server"`
	}
	if err := yaml.Unmarshal(config, &c); err != nil {
		return false
	}
	return c.Server.CertFile != "" && c.Server.KeyFile != ""
}

// generate builds the generated configuration of a CR from its base; a
// *status.Failure names the field that cannot be generated.
func generate(cr *ogxv1beta1.OGXServer, base []byte, source string) (*generated, error) {
	distro := cr.Spec.Distribution.Name
	if distro == "" {
		distro = cr.Spec.Distribution.Image
	}
	in := configgen.Input{Spec: &cr.Spec, Base: base, DistroName: distro}
	if n := cr.Spec.Network; n != nil && n.TLS != nil && n.TLS.SecretName != "" {
		in.ServerTLS = &configgen.ServerTLS{CertFile: serverCertFile, KeyFile: serverKeyFile}
	}
	out, err := configgen.Generate(in)
	if err != nil {
		var f *status.Failure
		if errors.As(err, &f) {
			g := *f
			g.Reason = ogxv1beta1.ReasonConfigGenerationFailed
			return nil, &g
		}
		return nil, &status.Failure{Reason: ogxv1beta1.ReasonConfigGenerationFailed, Field: "spec.providers", Message: err.Error()}
	}
	return &generated{
		Config: out.Config, Env: out.Env, ConfigMapName: configgen.ConfigMapName(cr.Name, out.Config),
		Providers: out.Providers, Resources: out.Resources, Version: out.ConfigVersion, Prelude: out.Prelude,
		BaseSource: source, BaseHash: hashOf(bytes.TrimSpace(base)),
	}, nil
}

// noBase is the failure of a generated configuration without a base.
func noBase(cr *ogxv1beta1.OGXServer) error {
	what := fmt.Sprintf("distribution %q ships no base configuration this operator knows", cr.Spec.Distribution.Name)
	if cr.Spec.Distribution.Image != "" {
		what = fmt.Sprintf("image %s is not a distribution this operator knows the configuration of", status.Quote(cr.Spec.Distribution.Image))
	}
	return &status.Failure{Reason: ogxv1beta1.ReasonConfigGenerationFailed, Field: "spec.baseConfig", Message: what + "; set spec.baseConfig to a ConfigMap key holding the distribution's config.yaml, or name a distribution that has one (starter, postgres-demo)"}
}
