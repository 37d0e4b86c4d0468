package evalhub

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func hub(spec evalhubv1.EvalHubSpec) *evalhubv1.EvalHub {
	return &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "hub", Namespace: "team-a", Generation: 1}, Spec: spec}
}

func inputs() valuesInputs {
	s, err := ParseSettings(nil, nil, nil, "ops")
	if err != nil {
		panic(err)
	}
	return valuesInputs{Settings: s}
}

func failure(t *testing.T, err error) *status.Failure {
	t.Helper()
	require.Error(t, err)
	var f *status.Failure
	require.ErrorAs(t, err, &f, "%T: %v", err, err)
	return f
}

// The database is upstream's rule: required; PostgreSQL needs its Secret.
// The failures name the field and the fix.
func TestDatabaseRule(t *testing.T) {
	_, err := translate(hub(evalhubv1.EvalHubSpec{}), inputs())
	f := failure(t, err)
	assert.Equal(t, "DatabaseConfigMissing", f.Reason)
	assert.Equal(t, "spec.database", f.Field)
	assert.Contains(t, f.Message, `"sqlite"`)

	_, err = translate(hub(evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "postgresql"}}), inputs())
	f = failure(t, err)
	assert.Equal(t, "DatabaseConfigInvalid", f.Reason)
	assert.Equal(t, "spec.database.secret", f.Field)

	v, err := translate(hub(evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "postgresql", Secret: "db", MaxOpenConns: 7}}), inputs())
	require.NoError(t, err)
	assert.Equal(t, "db", v.Database.Secret)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(v.Config), &cfg))
	assert.Equal(t, map[string]any{"driver": "pgx", "max_open_conns": float64(7), "max_idle_conns": float64(5)}, cfg["database"])
	assert.Equal(t, map[string]any{"dir": "/etc/evalhub/secrets", "mappings": map[string]any{"db-url": "database.url"}}, cfg["secrets"])

	v, err = translate(hub(evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite", Secret: "ignored"}}), inputs())
	require.NoError(t, err)
	assert.Empty(t, v.Database.Secret, "SQLite mounts no Secret")
	assert.Contains(t, v.Config, "url: file::eval_hub:?mode=memory&cache=shared")
}

// config.yaml carries upstream's fixed keys and the OTEL section exactly
// when spec.otel is set; its refusals name the field.
func TestServerConfig(t *testing.T) {
	sqlite := &evalhubv1.DatabaseSpec{Type: "sqlite"}
	v, err := translate(hub(evalhubv1.EvalHubSpec{Database: sqlite}), inputs())
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(v.Config), &cfg))
	assert.Equal(t, float64(8444), cfg["service"].(map[string]any)["port"])
	assert.Equal(t, DefaultImage, cfg["service"].(map[string]any)["eval_init_image"])
	assert.Equal(t, float64(30000000000), cfg["sidecar"].(map[string]any)["eval_hub"].(map[string]any)["http_timeout"], "a Go duration in nanoseconds, as upstream writes it")
	assert.Equal(t, "database.url", cfg["env_mappings"].(map[string]any)["DB_URL"])
	assert.NotContains(t, cfg, "otel")

	v, err = translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Otel: &evalhubv1.OTELSpec{ExporterType: "otlp-http", SamplingRatio: "0.25", EnableTracing: true, DisableDatabaseOtelScans: true, TracerTimeout: "30s"}}), inputs())
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal([]byte(v.Config), &cfg))
	assert.Equal(t, map[string]any{"enabled": true, "exporter_type": "otlp-http", "sampling_ratio": 0.25, "enable_tracing": true, "disable_database_otel_scan": true, "tracer_timeout": "30s"}, cfg["otel"])

	for field, o := range map[string]*evalhubv1.OTELSpec{
		"spec.otel.enableJobContainerLogs": {EnableJobContainerLogs: true},
		"spec.otel.samplingRatio":          {SamplingRatio: "1.5"},
		"spec.otel.metricExportInterval":   {MetricExportInterval: "soon"},
	} {
		_, err := translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Otel: o}), inputs())
		assert.Equal(t, field, failure(t, err).Field)
	}
}

// The environment is upstream's: the CR's variables first, protected ones
// keep their place with the operator's value, the server's TLS files are
// left out (upstream writes a nameless variable the API server refuses).
func TestServerEnv(t *testing.T) {
	cr := hub(evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Env: []corev1.EnvVar{
		{Name: "LOG_LEVEL", Value: "DEBUG"},
		{Name: "PORT", Value: "9999"},
		{Name: "TLS_CERT_FILE", Value: "/x"},
		{Name: "OPENAI_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
		{Name: "LOG_LEVEL", Value: "WARN"},
	}})
	v, err := translate(cr, inputs())
	require.NoError(t, err)
	var names []string
	byName := map[string]corev1.EnvVar{}
	for _, e := range v.Env {
		names = append(names, e.Name)
		byName[e.Name] = e
	}
	assert.Equal(t, []string{"LOG_LEVEL", "PORT", "OPENAI_API_KEY", "API_HOST", "MAX_CONCURRENT_EVALUATIONS", "DEFAULT_TIMEOUT_MINUTES", "MAX_RETRY_ATTEMPTS", "EVAL_HUB_CONFIG_DIR", "SERVICE_URL", "EVALHUB_INSTANCE_NAME", "EVALHUB_HARDWARE_PROFILES_NAMESPACE", "MLFLOW_WORKSPACE", "MLFLOW_TOKEN_PATH", "METRICS_PORT", "METRICS_HOST"}, names)
	assert.Equal(t, "WARN", byName["LOG_LEVEL"].Value, "the last value of a name set twice")
	assert.Equal(t, "8444", byName["PORT"].Value, "protected")
	assert.Equal(t, "https://hub.team-a.svc.cluster.local:8443", byName["SERVICE_URL"].Value)
	assert.Equal(t, "ops", byName["EVALHUB_HARDWARE_PROFILES_NAMESPACE"].Value)
	assert.Equal(t, "team-a", byName["MLFLOW_WORKSPACE"].Value)

	in := inputs()
	in.TrustConfigMap, in.TrustHash = "hub-mlflow-ca-bundle", "h"
	v, err = translate(cr, in)
	require.NoError(t, err)
	found := false
	for _, e := range v.Env {
		found = found || (e.Name == "MLFLOW_CA_CERT_PATH" && e.Value == mlflowCAPath)
	}
	assert.True(t, found, "MLFLOW_CA_CERT_PATH with a bundle")
	assert.Equal(t, "h", v.PodAnnotations[AnnotationCABundleHash])
}

// The MCP server: upstream's transports, environment, token and resources.
func TestMCPValues(t *testing.T) {
	spec := evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}}
	v, err := translate(hub(spec), inputs())
	require.NoError(t, err)
	assert.False(t, v.MCP.Enabled)

	spec.MCP = &evalhubv1.EvalHubMCPSpec{Enabled: ptr.To(true), Replicas: ptr.To[int32](2), EvalHubTransport: "http-sse", AuthSecret: "tok",
		Env: []corev1.EnvVar{{Name: "EVALHUB_PORT", Value: "1"}, {Name: "EXTRA", Value: "y"}}}
	v, err = translate(hub(spec), inputs())
	require.NoError(t, err)
	m := v.MCP
	assert.True(t, m.Enabled)
	assert.Equal(t, int32(2), m.Replicas)
	assert.Equal(t, "http", m.Transport)
	assert.Equal(t, DefaultImage, m.Image, "eval-hub's image unless spec.mcp.image")
	assert.Nil(t, m.Resources, "the chart's defaults")
	env := map[string]corev1.EnvVar{}
	for _, e := range m.Env {
		env[e.Name] = e
	}
	assert.Equal(t, "http-sse", env["EVALHUB_TRANSPORT"].Value)
	assert.Equal(t, "8445", env["EVALHUB_PORT"].Value, "protected")
	assert.Equal(t, "y", env["EXTRA"].Value)
	assert.Equal(t, "team-a", env["EVALHUB_TENANT"].Value)
	assert.Equal(t, "tok", env["EVALHUB_TOKEN"].ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, "token", env["EVALHUB_TOKEN"].ValueFrom.SecretKeyRef.Key)
}

// Provider and collection names become ConfigMap names: each must be a DNS
// label, and listed once.
func TestDefinitionNames(t *testing.T) {
	sqlite := &evalhubv1.DatabaseSpec{Type: "sqlite"}
	_, err := translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Providers: []string{"garak", "../x"}}), inputs())
	assert.Equal(t, "spec.providers[1]", failure(t, err).Field)
	_, err = translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Collections: []string{"a", "a"}}), inputs())
	assert.Equal(t, "spec.collections[1]", failure(t, err).Field)

	in := inputs()
	in.Providers = []Definition{{Name: "garak", Data: map[string]string{"garak.yaml": "id: garak"}}}
	a, err := translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Providers: []string{"garak"}}), in)
	require.NoError(t, err)
	in.Providers[0].Data = map[string]string{"garak.yaml": "id: garak2"}
	b, err := translate(hub(evalhubv1.EvalHubSpec{Database: sqlite, Providers: []string{"garak"}}), in)
	require.NoError(t, err)
	assert.NotEqual(t, a.PodAnnotations[AnnotationConfigHash], b.PodAnnotations[AnnotationConfigHash], "a definition's change restarts the server")
}

// A resource setting that is no quantity is refused with its key.
func TestSettings(t *testing.T) {
	s, err := ParseSettings([]string{EnvImage + "=env/hub:1"}, map[string]string{"evalHubCPULimit": "3"}, map[string]string{KeyImage: "up/hub:1", "kubeRBACProxyMemoryLimit": "1Gi"}, "ops")
	require.NoError(t, err)
	assert.Equal(t, "env/hub:1", s.Image, "RELATED_IMAGE_ before upstream's key")
	assert.Equal(t, "3", s.Server.Limits["cpu"])
	assert.Equal(t, "512Mi", s.Server.Requests["memory"])
	assert.Equal(t, "1Gi", s.Proxy.Limits["memory"], "upstream's key")
	_, err = ParseSettings(nil, map[string]string{"evalHubMemoryLimit": "lots"}, nil, "ops")
	assert.Contains(t, failure(t, err).Field, "evalHubMemoryLimit")
}

func deployment(ready, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready}}
}

// Status: upstream's phases and Ready reasons, the URL once ready, the
// active providers; stable when nothing changed (lastUpdateTime included).
func TestStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	spec := evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Providers: []string{"garak", "lighteval"}}
	o := observed{Observed: status.Observed{Generation: 1, Now: now}, Spec: spec, Namespace: "team-a", Name: "hub", Gathered: true, MissingProviders: []int{1}, Deployment: deployment(0, 1)}
	st := computeStatus(evalhubv1.EvalHubStatus{}, o)
	assert.Equal(t, evalhubv1.PhasePending, st.Phase)
	assert.Equal(t, corev1.ConditionFalse, st.Ready)
	assert.Equal(t, "DeploymentNotReady", meta.FindStatusCondition(st.Conditions, "Ready").Reason)
	assert.Empty(t, st.URL)
	assert.Equal(t, []string{"garak"}, st.ActiveProviders)
	p := meta.FindStatusCondition(st.Conditions, TypeProvidersReady)
	assert.Equal(t, metav1.ConditionFalse, p.Status)
	assert.Contains(t, p.Message, `spec.providers[1] "lighteval"`)
	assert.Equal(t, evalhubv1.PhaseDisabled, st.MCP.Phase)

	o.Deployment = deployment(1, 1)
	o.Now = metav1.NewTime(now.Add(time.Minute))
	st = computeStatus(st, o)
	assert.Equal(t, evalhubv1.PhaseReady, st.Phase)
	assert.Equal(t, corev1.ConditionTrue, st.Ready)
	assert.Equal(t, "https://hub.team-a.svc.cluster.local:8443", st.URL)
	assert.Equal(t, o.Now, *st.LastUpdateTime)

	o.Now = metav1.NewTime(now.Add(time.Hour))
	again := computeStatus(st, o)
	assert.Equal(t, st, again, "nothing changed: nothing to write")

	o.Failure = &status.Failure{Reason: "DatabaseConfigMissing", Field: "spec.database", Message: "is required"}
	st = computeStatus(st, o)
	assert.Equal(t, evalhubv1.PhaseError, st.Phase)
	assert.Equal(t, "DatabaseConfigMissing", meta.FindStatusCondition(st.Conditions, "Ready").Reason)
	assert.True(t, strings.Contains(meta.FindStatusCondition(st.Conditions, "Reconciled").Message, "spec.database"))
}

// status.mcp follows the MCP server's Deployment.
func TestMCPStatus(t *testing.T) {
	spec := evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, MCP: &evalhubv1.EvalHubMCPSpec{Enabled: ptr.To(true)}}
	o := observed{Observed: status.Observed{Generation: 1, Now: metav1.Now()}, Spec: spec, Namespace: "team-a", Name: "hub", Deployment: deployment(1, 1), MCPRendered: true, MCPDeployment: deployment(0, 1)}
	st := computeStatus(evalhubv1.EvalHubStatus{}, o)
	assert.Equal(t, evalhubv1.PhasePending, st.MCP.Phase)
	assert.False(t, st.MCP.Ready)
	o.MCPDeployment = deployment(1, 1)
	st = computeStatus(st, o)
	assert.Equal(t, evalhubv1.PhaseReady, st.MCP.Phase)
	assert.True(t, st.MCP.Ready)
	assert.Equal(t, "https://hub-mcp.team-a.svc.cluster.local:8443", st.MCP.URL)
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(st.MCP.Conditions, "Ready").Status)
}
