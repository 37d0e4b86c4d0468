package llamastack

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
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
	v, err := translate(cr(nil), valuesInputs{Distributions: table, CommonLabels: map[string]string{"k": "v"}})
	require.NoError(t, err)
	// As upstream: requests always (one CPU per worker, 1 worker by default), no limits without workers.
	require.NotNil(t, v.Container.Resources)
	assert.Equal(t, "1", qs(v.Container.Resources.Requests[corev1.ResourceCPU]))
	assert.Equal(t, "1Gi", qs(v.Container.Resources.Requests[corev1.ResourceMemory]))
	assert.Empty(t, v.Container.Resources.Limits)
	v.Container.Resources = nil
	assert.Equal(t, &chartValues{
		Name:           "demo",
		CommonLabels:   map[string]string{"k": "v"},
		Replicas:       1,
		Image:          "example.com/starter:1.0",
		Container:      Container{Name: "llama-stack", Port: 8321},
		ServiceAccount: ServiceAccount{Create: true},
		Storage:        Storage{MountPath: "/.llama"},
		NetworkPolicy:  NetworkPolicy{Enabled: true},
	}, v)
}

func TestLlamaStackFields(t *testing.T) {
	size := resource.MustParse("20Gi")
	v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
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
	}), valuesInputs{Distributions: table})
	require.NoError(t, err)
	assert.Equal(t, int32(3), v.Replicas)
	assert.Equal(t, "quay.io/me/llama:2", v.Image)
	assert.Equal(t, "server", v.Container.Name)
	assert.Equal(t, int32(9000), v.Container.Port)
	assert.Equal(t, []string{"python"}, v.Container.Command)
	assert.Equal(t, []string{"-m", "llama_stack"}, v.Container.Args)
	assert.Equal(t, Storage{Enabled: true, Size: "20Gi", MountPath: "/data"}, v.Storage)
	assert.Equal(t, "run", v.UserConfig.ConfigMapName)

	m, err := release.Values(v)
	require.NoError(t, err)
	// Quantities reach the chart in canonical form, as the API server stores them.
	assert.Equal(t, "1", m["container"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"])
}

func TestLlamaStackStorageDefaults(t *testing.T) {
	v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
	}), valuesInputs{Distributions: table})
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
		{"volume name taken", "spec.server.podOverrides.volumes[0].name", "used by the operator", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{Volumes: []corev1.Volume{{Name: "lls-storage"}}}
		}},
		{"mount of no volume", "spec.server.podOverrides.volumeMounts[0].name", "no volume", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{VolumeMounts: []corev1.VolumeMount{{Name: "ghost", MountPath: "/g"}}}
		}},
		{"relative mount path", "spec.server.storage.mountPath", "absolute", func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{MountPath: "data"}
		}},
		{"cross-namespace user config", "spec.server.userConfig.configMapNamespace", `copy ConfigMap "run" into namespace "ns"`, func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run", ConfigMapNamespace: "other"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := translate(cr(tt.mut), valuesInputs{Distributions: table})
			var fe *status.Failure
			require.True(t, errors.As(err, &fe), "want a *status.Failure, got %v", err)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, fe.Error(), tt.contains)
		})
	}
}

func TestMapIsStable(t *testing.T) {
	v, err := translate(cr(nil), valuesInputs{Distributions: table})
	require.NoError(t, err)
	a, err := release.Values(v)
	require.NoError(t, err)
	b, err := release.Values(v)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, float64(8321), a["container"].(map[string]any)["port"], "numbers take JSON's form, as in a stored release")
}

// Default resources as upstream computes them (resource_helper.go): a
// missing or zero request is filled (cpu: one per worker, 1 worker when
// unset; memory: 1Gi, not per worker); only with workers set, a missing or
// zero limit becomes the request. What the user gives wins, field by field.
func TestDefaultResources(t *testing.T) {
	type rl = map[corev1.ResourceName]string
	list := func(m rl) corev1.ResourceList {
		if m == nil {
			return nil
		}
		out := corev1.ResourceList{}
		for k, v := range m {
			out[k] = resource.MustParse(v)
		}
		return out
	}
	cpu, mem := corev1.ResourceCPU, corev1.ResourceMemory
	for _, tt := range []struct {
		name                     string
		workers                  *int32
		requests, limits         rl
		wantRequests, wantLimits rl
		wantWorkers              int32
	}{
		{name: "nothing set", wantRequests: rl{cpu: "1", mem: "1Gi"}},
		{name: "workers set", workers: ptr.To[int32](3), wantWorkers: 3,
			wantRequests: rl{cpu: "3", mem: "1Gi"}, wantLimits: rl{cpu: "3", mem: "1Gi"}},
		{name: "workers and a cpu request", workers: ptr.To[int32](3), wantWorkers: 3, requests: rl{cpu: "500m"},
			wantRequests: rl{cpu: "500m", mem: "1Gi"}, wantLimits: rl{cpu: "500m", mem: "1Gi"}},
		{name: "workers and a memory limit", workers: ptr.To[int32](2), wantWorkers: 2, limits: rl{mem: "4Gi"},
			wantRequests: rl{cpu: "2", mem: "1Gi"}, wantLimits: rl{cpu: "2", mem: "4Gi"}},
		{name: "zero requests and limits count as missing", workers: ptr.To[int32](2), wantWorkers: 2,
			requests: rl{cpu: "0", mem: "0"}, limits: rl{cpu: "0"},
			wantRequests: rl{cpu: "2", mem: "1Gi"}, wantLimits: rl{cpu: "2", mem: "1Gi"}},
		{name: "everything given", workers: ptr.To[int32](4), wantWorkers: 4,
			requests: rl{cpu: "250m", mem: "512Mi"}, limits: rl{cpu: "8", mem: "16Gi"},
			wantRequests: rl{cpu: "250m", mem: "512Mi"}, wantLimits: rl{cpu: "8", mem: "16Gi"}},
		{name: "no workers: limits stay the user's", requests: rl{mem: "2Gi"}, limits: rl{mem: "3Gi"},
			wantRequests: rl{cpu: "1", mem: "2Gi"}, wantLimits: rl{mem: "3Gi"}},
		{name: "zero workers count as unset", workers: ptr.To[int32](0), wantRequests: rl{cpu: "1", mem: "1Gi"}},
		// Upstream would request one CPU over a 500m limit, which the API server refuses.
		{name: "a default request never exceeds the user's limit", limits: rl{cpu: "500m", mem: "256Mi"},
			wantRequests: rl{cpu: "500m", mem: "256Mi"}, wantLimits: rl{cpu: "500m", mem: "256Mi"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
				c.Spec.Server.Workers = tt.workers
				c.Spec.Server.ContainerSpec.Resources = corev1.ResourceRequirements{Requests: list(tt.requests), Limits: list(tt.limits)}
			}), valuesInputs{Distributions: table})
			require.NoError(t, err)
			assert.Equal(t, tt.wantWorkers, v.Workers)
			require.NotNil(t, v.Container.Resources)
			str := func(l corev1.ResourceList) rl {
				if len(l) == 0 {
					return nil
				}
				out := rl{}
				for k, q := range l {
					out[k] = q.String()
				}
				return out
			}
			assert.Equal(t, tt.wantRequests, str(v.Container.Resources.Requests), "requests")
			assert.Equal(t, tt.wantLimits, str(v.Container.Resources.Limits), "limits")
		})
	}
	// The CR is not changed.
	c := cr(func(c *llamav1alpha1.LlamaStackDistribution) { c.Spec.Server.Workers = ptr.To[int32](2) })
	_, err := translate(c, valuesInputs{Distributions: table})
	require.NoError(t, err)
	assert.Nil(t, c.Spec.Server.ContainerSpec.Resources.Requests)
}

// The HPA's minimum is, as upstream, the largest of 1, spec.replicas and
// autoscaling.minReplicas (capped at maxReplicas, where upstream's HPA would
// be refused); ready means that many pods are available.
func TestHPAMinReplicas(t *testing.T) {
	for _, tt := range []struct {
		name              string
		replicas          int32
		minReplicas       *int32
		maxReplicas, want int32
	}{
		{"defaults", 1, nil, 4, 1},
		{"scaled to zero", 0, nil, 4, 1},
		{"replicas above the default minimum", 3, nil, 4, 3},
		{"replicas above minReplicas", 3, ptr.To[int32](2), 5, 3},
		{"minReplicas above replicas", 2, ptr.To[int32](4), 5, 4},
		{"replicas above maxReplicas", 6, nil, 4, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := cr(func(c *llamav1alpha1.LlamaStackDistribution) {
				c.Spec.Replicas = tt.replicas
				c.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MinReplicas: tt.minReplicas, MaxReplicas: tt.maxReplicas}
			})
			v, err := translate(c, valuesInputs{Distributions: table})
			require.NoError(t, err)
			require.NotNil(t, v.Autoscaling.MinReplicas)
			assert.Equal(t, tt.want, *v.Autoscaling.MinReplicas)
			assert.Equal(t, tt.maxReplicas, v.Autoscaling.MaxReplicas)
			assert.Equal(t, tt.want, observe(c, nil, release.Observation{}, "v").Replicas, "ready needs the HPA's minimum")
			if tt.minReplicas == nil {
				assert.Nil(t, c.Spec.Server.Autoscaling.MinReplicas, "the CR is not changed")
			}
		})
	}
}

func qs(q resource.Quantity) string { return q.String() }

func TestStorageNeverShrinks(t *testing.T) {
	small := resource.MustParse("5Gi")
	claimed := resource.MustParse("10Gi")
	v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &small}
	}), valuesInputs{Distributions: table, ClaimedStorage: &claimed})
	require.NoError(t, err)
	assert.Equal(t, "10Gi", v.Storage.Size, "a smaller size keeps the claim's")

	big := resource.MustParse("20Gi")
	v, err = translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.Storage = &llamav1alpha1.StorageSpec{Size: &big}
	}), valuesInputs{Distributions: table, ClaimedStorage: &claimed})
	require.NoError(t, err)
	assert.Equal(t, "20Gi", v.Storage.Size, "a larger size is an expansion request")
}

func TestPodOverridesAndScaling(t *testing.T) {
	grace := int64(30)
	minR, maxR, cpu := int32(2), int32(5), int32(70)
	one := intstr.FromInt32(1)
	v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.PodOverrides = &llamav1alpha1.PodOverrides{
			ServiceAccountName:            "mine",
			TerminationGracePeriodSeconds: &grace,
			Volumes:                       []corev1.Volume{{Name: "extra"}},
			VolumeMounts:                  []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}},
		}
		c.Spec.Server.Autoscaling = &llamav1alpha1.AutoscalingSpec{MinReplicas: &minR, MaxReplicas: maxR, TargetCPUUtilizationPercentage: &cpu}
		c.Spec.Server.PodDisruptionBudget = &llamav1alpha1.PodDisruptionBudgetSpec{MinAvailable: &one}
	}), valuesInputs{Distributions: table})
	require.NoError(t, err)
	assert.Equal(t, ServiceAccount{Create: false, Name: "mine"}, v.ServiceAccount)
	assert.Equal(t, &grace, v.TerminationGracePeriodSeconds)
	assert.Equal(t, Autoscaling{MinReplicas: &minR, MaxReplicas: 5, TargetCPUUtilizationPercentage: &cpu}, v.Autoscaling)
	assert.Equal(t, &one, v.PodDisruptionBudget.MinAvailable)
	assert.Len(t, v.ExtraVolumes, 1)
}

func TestNetwork(t *testing.T) {
	v, err := translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Network = &llamav1alpha1.NetworkSpec{ExposeRoute: true, AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"a", "b"}, Labels: []string{"team"}}}
	}), valuesInputs{Distributions: table, OperatorNamespace: "ops", Platform: platform.Cluster{Route: true}})
	require.NoError(t, err)
	assert.Equal(t, NetworkPolicy{Enabled: true, OperatorNamespace: "ops", AllowedNamespaces: []string{"a", "b"}, AllowedNamespaceLabels: []string{"team"}}, v.NetworkPolicy)
	assert.True(t, v.Expose.Enabled)
	assert.True(t, v.CapabilityValues.Route)

	v, err = translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"a", "*"}}}
	}), valuesInputs{Distributions: table, NetworkPolicyDisabled: true})
	require.NoError(t, err)
	assert.Equal(t, NetworkPolicy{Enabled: false, AllowAllNamespaces: true}, v.NetworkPolicy)
}

// allowedFrom entries are admitted as upstream admits them; one that can
// match no namespace is left out of the NetworkPolicy (and reported, see
// TestAllowedFromCondition), "key=value" is a label with a value, and the
// rest of the spec applies.
func TestAllowedFromEntriesThatMatchNothingAreLeftOut(t *testing.T) {
	c := cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Replicas = 2
		c.Spec.Network = &llamav1alpha1.NetworkSpec{ExposeRoute: true, AllowedFrom: &llamav1alpha1.AllowedFromSpec{
			// upstream's config/samples/example-with-network-config.yaml, and hostile strings
			Namespaces: []string{"nsA", "team-b", "a\n- b", "", "x.y"},
			// upstream's README (team=frontend) and sample
			Labels: []string{"team=frontend", "myproject/lls-allowed", "team/authorized", "{a: b}", "a=b=c", "=v", "example.com/tier=gold"},
		}}
	})
	v, err := translate(c, valuesInputs{Distributions: table, OperatorNamespace: "ops"})
	require.NoError(t, err, "admitted, as upstream admits it")
	assert.Equal(t, NetworkPolicy{
		Enabled: true, OperatorNamespace: "ops",
		AllowedNamespaces:           []string{"team-b"},
		AllowedNamespaceLabels:      []string{"myproject/lls-allowed", "team/authorized"},
		AllowedNamespaceMatchLabels: []map[string]string{{"team": "frontend"}, {"example.com/tier": "gold"}},
	}, v.NetworkPolicy)
	assert.True(t, v.Expose.Enabled, "the rest of the spec applies")
	assert.Equal(t, int32(2), v.Replicas)

	// Only bad entries: none reaches the chart, the policy keeps its fixed sources.
	v, err = translate(cr(func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Network = &llamav1alpha1.NetworkSpec{AllowedFrom: &llamav1alpha1.AllowedFromSpec{Namespaces: []string{"nsA", "nsB"}, Labels: []string{"team=front end"}}}
	}), valuesInputs{Distributions: table})
	require.NoError(t, err)
	assert.Equal(t, NetworkPolicy{Enabled: true}, v.NetworkPolicy)
}

// The anyuid binding is rendered only when the setting is on and the cluster
// is OpenShift (where the SCC and its ClusterRole exist).
func TestAnyUIDOnlyOnOpenShift(t *testing.T) {
	for _, tc := range []struct {
		setting, openshift, want bool
	}{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, false}} {
		v, err := translate(cr(nil), valuesInputs{Distributions: table, AnyUID: tc.setting, Platform: platform.Cluster{OpenShift: tc.openshift}})
		require.NoError(t, err)
		assert.Equal(t, tc.want, v.AnyUID.Enabled, "setting %t, OpenShift %t", tc.setting, tc.openshift)
	}
}

// A typed configuration with TLS makes the probes follow it: https with a
// TLS pair, a TCP connect when client certificates are required.
func TestServesFollowsTheTypedTLS(t *testing.T) {
	for want, srv := range map[string]*llamav1alpha1.ServerSettings{
		"":      nil,
		"https": {TLSCertFile: "/tls/tls.crt", TLSKeyFile: "/tls/tls.key"},
		"mtls":  {TLSCertFile: "/tls/tls.crt", TLSKeyFile: "/tls/tls.key", TLSCAFile: "/tls/ca.crt"},
	} {
		c := cr(func(c *llamav1alpha1.LlamaStackDistribution) {
			c.Spec.Server.Config = &llamav1alpha1.ServerConfig{Server: srv, Providers: &llamav1alpha1.Providers{Inference: []llamav1alpha1.Provider{
				{ProviderID: "vllm", ProviderType: "remote::vllm"},
			}}}
		})
		v, err := translate(c, valuesInputs{Distributions: table})
		require.NoError(t, err, want)
		assert.Equal(t, want, v.Container.Serves)
	}
}
