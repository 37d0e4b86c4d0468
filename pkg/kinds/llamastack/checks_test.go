package llamastack

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Names and references Kubernetes would refuse downstream become an
// InvalidSpec naming the field, never an install that fails with backoff.
func TestNamesKubernetesWouldRefuse(t *testing.T) {
	type mut = func(*llamav1alpha1.LlamaStackDistribution)
	userConfig := func(name, ns string) mut {
		return func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: name, ConfigMapNamespace: ns}
		}
	}
	caBundle := func(name, ns string, keys ...string) mut {
		return func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: name, ConfigMapNamespace: ns, ConfigMapKeys: keys}}
		}
	}
	long := strings.Repeat("a", 254)
	for _, tc := range []struct {
		name, field string
		mut         mut
	}{
		{"userConfig name with a slash", "spec.server.userConfig.configMapName", userConfig("a/b", "")},
		{"userConfig name with a percent", "spec.server.userConfig.configMapName", userConfig("a%2Fb", "")},
		{"userConfig name in uppercase", "spec.server.userConfig.configMapName", userConfig("Config", "")},
		{"userConfig name over 253 characters", "spec.server.userConfig.configMapName", userConfig(long, "")},
		{"userConfig name with a document", "spec.server.userConfig.configMapName", userConfig("x\n---\nkind: Secret", "")},
		{"userConfig namespace with a dot", "spec.server.userConfig.configMapNamespace", userConfig("ok", "a.b")},
		{"caBundle name with a slash", "spec.server.tlsConfig.caBundle.configMapName", caBundle("../x", "")},
		{"caBundle name over 253 characters", "spec.server.tlsConfig.caBundle.configMapName", caBundle(long, "")},
		{"caBundle namespace in uppercase", "spec.server.tlsConfig.caBundle.configMapNamespace", caBundle("ok", "NS")},
		{"caBundle key with a slash", "spec.server.tlsConfig.caBundle.configMapKeys[1]", caBundle("ok", "", "ca.crt", "a/b")},
		{"container name with a newline", "spec.server.containerSpec.name", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.ContainerSpec.Name = "x\n---\napiVersion: v1"
		}},
		{"container name with a dot", "spec.server.containerSpec.name", func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.ContainerSpec.Name = "a.b" }},
		{"service account with a document", "spec.server.podOverrides.serviceAccountName", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{ServiceAccountName: "sa\n---\nkind: NetworkPolicy"}
		}},
		{"image with surrounding whitespace", "spec.server.distribution.image", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: " quay.io/x:1\n"}
		}},
		{"PDB minAvailable with a document", "spec.server.podDisruptionBudget.minAvailable", func(c *llamav1alpha1.LlamaStackDistribution) {
			v := intstr.FromString("1\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy")
			c.Spec.Server.PodDisruptionBudget = &llamav1alpha1.PodDisruptionBudgetSpec{MinAvailable: &v}
		}},
		{"PDB maxUnavailable negative", "spec.server.podDisruptionBudget.maxUnavailable", func(c *llamav1alpha1.LlamaStackDistribution) {
			v := intstr.FromInt32(-1)
			c.Spec.Server.PodDisruptionBudget = &llamav1alpha1.PodDisruptionBudgetSpec{MaxUnavailable: &v}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := translate(cr(tc.mut), valuesInputs{Distributions: table})
			var fe *status.Failure
			require.True(t, errors.As(err, &fe), "want a *status.Failure, got %v", err)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, "InvalidSpec", fe.Reason)
			assert.Less(t, len(fe.Message), 600, "messages stay short, whatever the input")
		})
	}
	// allowedFrom entries are admitted, as upstream admits them: one that can
	// match no namespace is left out of the NetworkPolicy and reported
	// (TestAllowedFromEntriesThatMatchNothingAreLeftOut, TestAllowedFromCondition).
	for _, af := range []llamav1alpha1.AllowedFromSpec{
		{Namespaces: []string{"nsA"}},
		{Namespaces: []string{"a\n- b"}},
		{Labels: []string{"team=frontend"}},
		{Labels: []string{"{a: b}"}},
	} {
		_, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &af}
		}), valuesInputs{Distributions: table})
		assert.NoError(t, err, "%+v", af)
	}

	// Names that are valid stay valid.
	_, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		userConfig("my.config-1", "")(c)
		c.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"*", "team-b"}, Labels: []string{"example.com/team"}}}
	}), valuesInputs{Distributions: table})
	require.NoError(t, err)
}
