package values

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/distributions"
)

var table = distributions.Table{"starter": "example.com/starter:1.0", "remote-vllm": "example.com/vllm:1.0"}

func cr(mut func(*llamav1alpha1.LlamaStackDistribution)) *llamav1alpha1.LlamaStackDistribution {
	c := &llamav1alpha1.LlamaStackDistribution{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"},
		Spec: llamav1alpha1.LlamaStackDistributionSpec{
			Replicas: 1,
			Server:   llamav1alpha1.ServerSpec{Distribution: llamav1alpha1.DistributionType{Name: "starter"}},
		},
	}
	if mut != nil {
		mut(c)
	}
	return c
}

func TestLlamaStackDefaults(t *testing.T) {
	v, err := LlamaStack(cr(nil), LlamaStackInputs{Distributions: table, CommonLabels: map[string]string{"k": "v"}})
	require.NoError(t, err)
	assert.Equal(t, &LlamaStackValues{
		Name:         "demo",
		CommonLabels: map[string]string{"k": "v"},
		Replicas:     1,
		Image:        "example.com/starter:1.0",
		Container:    Container{Name: "llama-stack", Port: 8321},
		Storage:      Storage{MountPath: "/.llama"},
	}, v)
}

func TestLlamaStackFields(t *testing.T) {
	size := resource.MustParse("20Gi")
	v, err := LlamaStack(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Replicas = 3
		c.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "quay.io/me/llama:2"}
		c.Spec.Server.ContainerSpec = llamav1alpha1.ContainerSpec{
			Name: "server", Port: 9000,
			Env:       []corev1.EnvVar{{Name: "A", Value: "1"}},
			Command:   []string{"python"},
			Args:      []string{"-m", "llama_stack"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}},
		}
		c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &size, MountPath: "/data"}
		c.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run", ConfigMapNamespace: "ns"}
	}), LlamaStackInputs{Distributions: table})
	require.NoError(t, err)
	assert.Equal(t, int32(3), v.Replicas)
	assert.Equal(t, "quay.io/me/llama:2", v.Image)
	assert.Equal(t, "server", v.Container.Name)
	assert.Equal(t, int32(9000), v.Container.Port)
	assert.Equal(t, []string{"python"}, v.Container.Command)
	assert.Equal(t, []string{"-m", "llama_stack"}, v.Container.Args)
	assert.Equal(t, Storage{Enabled: true, Size: "20Gi", MountPath: "/data"}, v.Storage)
	assert.Equal(t, "run", v.UserConfig.ConfigMapName)

	m, err := Map(v)
	require.NoError(t, err)
	// Quantities reach the chart in canonical form, as the API server stores them.
	assert.Equal(t, "1", m["container"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"])
}

func TestLlamaStackStorageDefaults(t *testing.T) {
	v, err := LlamaStack(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
	}), LlamaStackInputs{Distributions: table})
	require.NoError(t, err)
	assert.Equal(t, Storage{Enabled: true, Size: "10Gi", MountPath: "/.llama"}, v.Storage)
}

func TestLlamaStackInvalid(t *testing.T) {
	zero := resource.MustParse("0")
	tests := []struct {
		name, field, contains string
		mut                   func(*llamav1alpha1.LlamaStackDistribution)
	}{
		{"unknown distribution", "spec.server.distribution.name", "valid names: remote-vllm, starter", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Distribution.Name = "nope"
		}},
		{"name and image", "spec.server.distribution", "exactly one", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Distribution.Image = "x"
		}},
		{"neither name nor image", "spec.server.distribution", "exactly one", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Distribution.Name = ""
		}},
		{"zero storage", "spec.server.storage.size", "positive", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &zero}
		}},
		{"cross-namespace user config", "spec.server.userConfig.configMapNamespace", `copy ConfigMap "run" into namespace "ns"`, func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run", ConfigMapNamespace: "other"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LlamaStack(cr(tt.mut), LlamaStackInputs{Distributions: table})
			var fe *FieldError
			require.True(t, errors.As(err, &fe), "want a FieldError, got %v", err)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, fe.Error(), tt.contains)
		})
	}
}

func TestMapIsStable(t *testing.T) {
	v, err := LlamaStack(cr(nil), LlamaStackInputs{Distributions: table})
	require.NoError(t, err)
	a, err := Map(v)
	require.NoError(t, err)
	b, err := Map(v)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, float64(8321), a["container"].(map[string]any)["port"], "numbers take JSON's form, as in a stored release")
}
