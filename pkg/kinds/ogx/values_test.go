package ogx

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func crOf(t *testing.T, spec string) *ogxv1beta1.OGXServer {
	t.Helper()
	cr := &ogxv1beta1.OGXServer{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(spec), cr))
	if cr.Name == "" {
		cr.Name = "demo"
	}
	cr.Namespace = "team-a"
	return cr
}

func valuesOf(t *testing.T, cr *ogxv1beta1.OGXServer, caps ...release.Capabilities) *chartValues {
	t.Helper()
	c := release.NewCapabilities()
	if len(caps) > 0 {
		c = caps[0]
	}
	in, err := (&Kind{}).OfflineInputs(cr, c)
	require.NoError(t, err)
	v, err := translate(cr, in.values)
	require.NoError(t, err)
	return v
}

func failureOf(t *testing.T, cr *ogxv1beta1.OGXServer) *status.Failure {
	t.Helper()
	in, err := (&Kind{}).OfflineInputs(cr, release.NewCapabilities())
	if err == nil {
		_, err = translate(cr, in.values)
	}
	var f *status.Failure
	require.True(t, errors.As(err, &f), "want a Failure, got %v", err)
	return f
}

// Upstream's full sample becomes upstream's workload: replicas, workers,
// storage, PDB, spread, HPA, monitoring port, the override configuration.
func TestValuesOfUpstreamsSample(t *testing.T) {
	v := valuesOf(t, crOf(t, `
spec:
  distribution: {name: starter}
  overrideConfig: {name: starter-config, key: config.yaml}
  workload:
    replicas: 1
    workers: 1
    storage: {size: "20Gi", mountPath: "/.ogx"}
    overrides:
      env: [{name: OLLAMA_URL, value: "http://ollama:11434"}]
    podDisruptionBudget: {maxUnavailable: 1}
    topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
    autoscaling: {minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 75, targetMemoryUtilizationPercentage: 70}
  monitoring: {enabled: true, metricsPort: 9090}
`))
	assert.Equal(t, "docker.io/ogxai/distribution-starter:latest", v.Image)
	assert.Equal(t, int32(1), v.Replicas)
	assert.Equal(t, int32(1), v.Workers)
	assert.Equal(t, storageValues{Enabled: true, Size: "20Gi", MountPath: "/.ogx"}, v.Storage)
	assert.Equal(t, configValues{ConfigMapName: "starter-config", Key: "config.yaml"}, v.Config)
	assert.Equal(t, int32(5), v.Autoscaling.MaxReplicas)
	assert.Equal(t, int32(1), *v.Autoscaling.MinReplicas)
	assert.Equal(t, monitoring{Enabled: true, MetricsPort: 9090}, v.Monitoring)
	assert.Equal(t, "1", v.PodDisruptionBudget.MaxUnavailable.String())
	assert.Len(t, v.TopologySpreadConstraints, 1)
	assert.Equal(t, "OLLAMA_URL", v.Container.Env[0].Name)
	// As upstream: one CPU per worker and 1Gi requested; workers set, limits as requests.
	assert.Equal(t, "1", v.Container.Resources.Requests.Cpu().String())
	assert.Equal(t, "1Gi", v.Container.Resources.Requests.Memory().String())
	assert.Equal(t, "1Gi", v.Container.Resources.Limits.Memory().String())
	assert.True(t, v.NetworkPolicy.Enabled, "on by default, as upstream")
	assert.False(t, v.NetworkPolicy.OpenshiftIngress, "the router is admitted only with a network section, as upstream")
}

// Without a workload section: one replica, one worker, no limits, an emptyDir.
func TestValuesDefaults(t *testing.T) {
	v := valuesOf(t, crOf(t, `spec: {distribution: {image: "quay.io/me/ogx:1"}}`))
	assert.Equal(t, "quay.io/me/ogx:1", v.Image)
	assert.Equal(t, int32(1), v.Replicas)
	assert.Equal(t, int32(1), v.Workers)
	assert.Empty(t, v.Container.Resources.Limits)
	assert.False(t, v.Storage.Enabled)
	assert.Equal(t, "/.ogx", v.Storage.MountPath)
	assert.Equal(t, int32(8321), v.Container.Port)
	assert.Equal(t, monitoring{Enabled: true, MetricsPort: 9464}, v.Monitoring)
	assert.Empty(t, v.Config)
}

// The network section: port, server TLS, external access with a host, and
// the policy's switch and rules.
func TestValuesNetwork(t *testing.T) {
	v := valuesOf(t, crOf(t, `
spec:
  distribution: {name: starter}
  network:
    port: 9000
    tls: {secretName: server-tls}
    externalAccess: {enabled: true, hostname: ogx.example.com}
    policy:
      policyTypes: [Ingress, Egress]
      egress: [{to: [{ipBlock: {cidr: 10.0.0.0/8}}]}]
`))
	assert.Equal(t, int32(9000), v.Container.Port)
	assert.Equal(t, "server-tls", v.TLS.SecretName)
	assert.Equal(t, "http", v.Container.Serves, "the image's own configuration is not known to serve TLS")
	assert.Equal(t, expose{Enabled: true, Host: "ogx.example.com"}, v.Expose)
	assert.True(t, v.NetworkPolicy.OpenshiftIngress)
	assert.Len(t, v.NetworkPolicy.Egress, 1)
	assert.Len(t, v.NetworkPolicy.PolicyTypes, 2)

	off := valuesOf(t, crOf(t, `spec: {distribution: {name: starter}, network: {policy: {enabled: false}}}`))
	assert.False(t, off.NetworkPolicy.Enabled)

	// A generated configuration serves the TLS pair: the probes use HTTPS.
	gen := valuesOf(t, crOf(t, `
spec:
  distribution: {name: starter}
  network: {tls: {secretName: server-tls}}
  disabledAPIs: [vector_io]
`))
	assert.Equal(t, "https", gen.Container.Serves)
	assert.Contains(t, gen.Config.Generated, serverCertFile)
}

// A generated configuration: its own ConfigMap, named after its content,
// whose name is the pods' restart hash; Secret values as secretKeyRef.
func TestValuesGenerated(t *testing.T) {
	cr := crOf(t, `
spec:
  distribution: {name: starter}
  providers:
    inference:
      remote:
        openai: [{id: openai-primary, apiKey: {name: openai-creds, key: api-key}}]
  resources:
    models: [{name: gpt-4o-mini, provider: openai-primary, modelType: llm}]
  disabledAPIs: [vector_io]
`)
	v := valuesOf(t, cr)
	require.NotEmpty(t, v.Config.Generated)
	assert.Regexp(t, `^demo-config-[0-9a-f]{16}$`, v.Config.GeneratedName)
	assert.Equal(t, v.Config.GeneratedName, v.PodAnnotations[AnnotationUserConfigHash])
	require.Len(t, v.SecretEnv, 1)
	assert.Equal(t, "OGX_OPENAI_PRIMARY_API_KEY", v.SecretEnv[0].Name)
	assert.Equal(t, &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "openai-creds"}, Key: "api-key"}, v.SecretEnv[0].ValueFrom.SecretKeyRef)
	assert.NotContains(t, v.Config.Generated, "openai-creds", "no Secret reference, let alone a value, in the ConfigMap")
	assert.Equal(t, v.Config.GeneratedName, valuesOf(t, cr).Config.GeneratedName, "deterministic")

	cr.Spec.Resources.Models[0].Name = "gpt-4o"
	assert.NotEqual(t, v.Config.GeneratedName, valuesOf(t, cr).Config.GeneratedName, "a new configuration is a new ConfigMap")
}

// Bad input names its field and the fix.
func TestValuesRefuseBadInput(t *testing.T) {
	for spec, field := range map[string]string{
		`spec: {distribution: {name: nope}}`: "spec.distribution.name",
		`spec: {distribution: {name: starter}, workload: {overrides: {volumes: [{name: ogx-storage, emptyDir: {}}]}}}`: "spec.workload.overrides.volumes[0].name",
		`spec: {distribution: {name: starter}, workload: {overrides: {volumeMounts: [{name: x, mountPath: /x}]}}}`:     "spec.workload.overrides.volumeMounts[0].name",
		`spec: {distribution: {name: starter}, workload: {storage: {mountPath: data}}}`:                                "spec.workload.storage.mountPath",
		`spec: {distribution: {name: starter}, workload: {podDisruptionBudget: {maxUnavailable: "half"}}}`:             "spec.workload.podDisruptionBudget.maxUnavailable",
		`spec: {distribution: {name: starter}, tls: {trust: {caCertificates: [{name: ca, key: "a b"}]}}}`:              "spec.tls.trust.caCertificates[0].key",
		`spec: {distribution: {name: starter}, overrideConfig: {name: "Bad_Name", key: config.yaml}}`:                  "spec.overrideConfig.name",
		`spec: {distribution: {image: "quay.io/x:1"}, disabledAPIs: [vector_io]}`:                                      "spec.baseConfig",
		`spec: {distribution: {name: remote-vllm}, disabledAPIs: [vector_io]}`:                                         "spec.baseConfig",
	} {
		t.Run(field, func(t *testing.T) {
			f := failureOf(t, crOf(t, spec))
			assert.Equal(t, field, f.Field, f.Error())
			assert.NotEmpty(t, f.Message)
		})
	}
	f := failureOf(t, crOf(t, `spec: {distribution: {name: nope}}`))
	assert.Contains(t, f.Message, "available distributions: meta-reference-gpu, postgres-demo, remote-vllm, starter")
}

// The distribution's image, by precedence: the operator's settings key,
// upstream's ConfigMap, RELATED_IMAGE_OGX_<NAME>, the table.
func TestSettingsImagePrecedence(t *testing.T) {
	env := []string{"RELATED_IMAGE_OGX_STARTER=env/starter", "RELATED_IMAGE_OGX_REMOTE_VLLM=env/vllm", "RELATED_IMAGE_STARTER=not-ours"}
	upstream := map[string]string{"image-overrides": "starter: upstream/starter\npostgres-demo: upstream/pg\nunknown: upstream/x\n"}
	ours := map[string]string{KeyImageOverrides: "starter: ours/starter\n"}
	s, err := ParseSettings(env, ours, upstream)
	require.NoError(t, err)
	assert.Equal(t, "ours/starter", s.Distributions["starter"])
	assert.Equal(t, "upstream/pg", s.Distributions["postgres-demo"])
	assert.Equal(t, "env/vllm", s.Distributions["remote-vllm"])
	assert.Equal(t, "docker.io/ogxai/distribution-meta-reference-gpu:latest", s.Distributions["meta-reference-gpu"])
	assert.NotContains(t, s.Distributions, "unknown", "upstream overrides only names it knows")

	_, err = ParseSettings(nil, map[string]string{KeyImageOverrides: "[not a map"}, nil)
	var f *status.Failure
	require.True(t, errors.As(err, &f))
	assert.Equal(t, status.ReasonInvalidOperatorSettings, f.Reason)
	assert.Contains(t, f.Field, KeyImageOverrides)
}

// A postgres connection string reaches the server through a prelude in the
// container's shell, which then execs the image's entrypoint (or the user's
// command); the Secret only by secretKeyRef.
func TestValuesPostgresPrelude(t *testing.T) {
	spec := `
spec:
  distribution: {name: starter}
  storage:
    sql: {type: postgres, connectionString: {name: pg, key: url}}
`
	v := valuesOf(t, crOf(t, spec))
	require.Len(t, v.Container.Command, 4)
	assert.Equal(t, []string{"/bin/sh", "-c"}, v.Container.Command[:2])
	assert.Contains(t, v.Container.Command[2], "OGX_STORAGE_SQL_CONNECTION_STRING")
	assert.True(t, strings.HasSuffix(v.Container.Command[2], "\nexec \"$@\""))
	assert.Equal(t, []string{entrypoint}, v.Container.Args)
	assert.Contains(t, v.Config.Generated, "${env.OGX_STORAGE_SQL_HOST}")
	var names []string
	for _, e := range v.SecretEnv {
		names = append(names, e.Name)
	}
	assert.Contains(t, names, "OGX_STORAGE_SQL_CONNECTION_STRING")

	own := valuesOf(t, crOf(t, spec+"  workload: {overrides: {command: [my-server], args: [--flag]}}\n"))
	assert.Equal(t, []string{"my-server", "--flag"}, own.Container.Args)
}
