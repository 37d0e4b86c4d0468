package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	evalhubv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/evalhub"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Upstream's two samples (config/samples/evalhub_v1alpha1_evalhub*.yaml at
// 11c335b), their fields unchanged, in the test's namespace.
const (
	upstreamEvalHub = `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: EvalHub
metadata:
  name: evalhub-sample
spec:
  replicas: 2
  collections:
    - leaderboard-v2
  env:
    - name: LOG_LEVEL
      value: "INFO"
    - name: OPENAI_API_KEY
      valueFrom:
        secretKeyRef:
          name: openai-secret
          key: api-key
`
	upstreamEvalHubMCP = `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: EvalHub
metadata:
  name: evalhub-mcp-sample
spec:
  replicas: 1
  database:
    type: sqlite
  collections:
    - leaderboard-v2
  mcp:
    enabled: true
    replicas: 1
    authSecret: evalhub-mcp-token
`
)

func applyYAML(t *testing.T, ns, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	u.SetNamespace(ns)
	require.NoError(t, k8s.Create(context.Background(), u))
	return u
}

// evalHubDefinitions installs, once, the operator namespace's definitions of
// the providers and collection the samples use (upstream's defaults).
func evalHubDefinitions(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	defs := map[string]map[string]string{
		"provider/garak":                 {evalhub.LabelProviderType: "system", evalhub.LabelProviderName: "garak"},
		"provider/garak-kfp":             {evalhub.LabelProviderType: "system", evalhub.LabelProviderName: "garak-kfp"},
		"provider/lm-evaluation-harness": {evalhub.LabelProviderType: "system", evalhub.LabelProviderName: "lm-evaluation-harness"},
		"collection/leaderboard-v2":      {evalhub.LabelCollectionType: "system", evalhub.LabelCollectionName: "leaderboard-v2"},
	}
	for key, labels := range defs {
		name := "evalhub-" + key[len("provider/"):]
		if key[0] == 'c' {
			name = "evalhub-collection-" + key[len("collection/"):]
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: name, Labels: labels}, Data: map[string]string{"def.yaml": "id: " + key}}
		if err := k8s.Create(ctx, cm); err != nil {
			require.NoError(t, env.Get(operatorNamespace, name, &corev1.ConfigMap{}), "create %s: %v", name, err)
		}
	}
}

// waitEvalHub waits for the condition at the CR's generation.
func waitEvalHub(t *testing.T, ns, name, typ string, st metav1.ConditionStatus, reason string) *evalhubv1.EvalHub {
	t.Helper()
	cr := &evalhubv1.EvalHub{}
	env.Eventually(t, fmt.Sprintf("%s %s=%s %s", name, typ, st, reason), func() error {
		if err := env.Get(ns, name, cr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cr.Status.Conditions, typ)
		if c == nil || c.Status != st || c.Reason != reason || c.ObservedGeneration != cr.Generation {
			return fmt.Errorf("conditions %+v", cr.Status.Conditions)
		}
		return nil
	})
	return cr
}

// Upstream's MCP sample, applied through v1alpha1 as written: read through
// v1 (the storage version) with tenancy multi, as upstream's conversion
// gives it; upstream's objects by upstream's names; Ready with the server's
// URL once the pods are; status.mcp follows the MCP server; deleting it
// removes everything.
func TestEvalHubUpstreamMCPSample(t *testing.T) {
	t.Parallel()
	evalHubDefinitions(t)
	ns := env.NewNamespace(t, "")
	applyYAML(t, ns, upstreamEvalHubMCP)
	name := "evalhub-mcp-sample"
	got := waitEvalHub(t, ns, name, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	assert.Contains(t, got.Finalizers, release.Finalizer)
	assert.Equal(t, evalhubv1.TenancyMulti, got.Spec.Tenancy, "v1's default, as upstream's conversion sets it")
	assert.Equal(t, []string{"garak", "garak-kfp", "lm-evaluation-harness"}, got.Spec.Providers, "the CRD's default")
	assert.Equal(t, []string{"garak", "garak-kfp", "lm-evaluation-harness"}, got.Status.ActiveProviders)
	assert.Equal(t, []string{"leaderboard-v2"}, got.Status.ActiveCollections)
	assert.Equal(t, evalhubv1.PhasePending, got.Status.Phase)

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, name, dep))
	assert.Equal(t, "evalhub-mcp-sample-service", dep.Spec.Template.Spec.ServiceAccountName)
	assert.Equal(t, map[string]string{"app": "eval-hub", "instance": name, "component": "api"}, dep.Spec.Selector.MatchLabels)
	var sources []string
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == "evalhub-providers" {
			for _, s := range v.Projected.Sources {
				sources = append(sources, s.ConfigMap.Name)
			}
		}
	}
	assert.Equal(t, []string{name + "-provider-garak", name + "-provider-garak-kfp", name + "-provider-lm-evaluation-harness"}, sources)
	for _, cm := range []string{"-config", "-service-ca", "-provider-garak", "-collection-leaderboard-v2", "-mcp-config"} {
		assert.NoError(t, env.Get(ns, name+cm, &corev1.ConfigMap{}), cm)
	}
	provider := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, name+"-provider-garak", provider))
	assert.Equal(t, map[string]string{"def.yaml": "id: provider/garak"}, provider.Data, "a copy of the definition")
	for _, svc := range []string{name, name + "-metrics", name + "-mcp"} {
		assert.NoError(t, env.Get(ns, svc, &corev1.Service{}), svc)
	}
	mcp := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, name+"-mcp", mcp))
	var token *corev1.EnvVar
	for i, e := range mcp.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "EVALHUB_TOKEN" {
			token = &mcp.Spec.Template.Spec.Containers[0].Env[i]
		}
	}
	require.NotNil(t, token)
	assert.Equal(t, "evalhub-mcp-token", token.ValueFrom.SecretKeyRef.Name)

	markReady(t, ns, name, 1)
	markReady(t, ns, name+"-mcp", 1)
	ready := waitEvalHub(t, ns, name, status.TypeReady, metav1.ConditionTrue, "DeploymentReady")
	assert.NotContains(t, env.EventReasons(t, ns, name), "DriftRepaired", "what the chart renders is what the API server stores: nothing to repair")
	assert.Equal(t, evalhubv1.PhaseReady, ready.Status.Phase)
	assert.Equal(t, corev1.ConditionTrue, ready.Status.Ready)
	assert.Equal(t, fmt.Sprintf("https://%s.%s.svc.cluster.local:8443", name, ns), ready.Status.URL)
	env.Eventually(t, "the MCP server Ready", func() error {
		if err := env.Get(ns, name, ready); err != nil {
			return err
		}
		if ready.Status.MCP == nil || !ready.Status.MCP.Ready {
			return fmt.Errorf("status.mcp %+v", ready.Status.MCP)
		}
		return nil
	})

	// The same object through v1alpha1, the version it was written in.
	old := &evalhubv1alpha1.EvalHub{}
	require.NoError(t, env.Get(ns, name, old))
	assert.Equal(t, evalhubv1.PhaseReady, old.Status.Phase)

	require.NoError(t, k8s.Delete(context.Background(), ready))
	env.Eventually(t, "the Deployments go with the CR", env.GoneFrom(dep))
	env.Eventually(t, "the CR goes", env.GoneFrom(&evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
}

// Upstream's first sample has no database, which upstream's operator
// refuses (it does not choose one): so does this one, naming the field and
// applying nothing; with a database it runs, and a definition that does not
// exist is a warning naming the entry, not a stop.
func TestEvalHubUpstreamSampleWithoutDatabase(t *testing.T) {
	t.Parallel()
	evalHubDefinitions(t)
	ns := env.NewNamespace(t, "")
	applyYAML(t, ns, upstreamEvalHub)
	name := "evalhub-sample"
	got := waitEvalHub(t, ns, name, status.TypeReconciled, metav1.ConditionFalse, "DatabaseConfigMissing")
	assert.Equal(t, evalhubv1.PhaseError, got.Status.Phase)
	assert.Contains(t, meta.FindStatusCondition(got.Status.Conditions, status.TypeReconciled).Message, "spec.database")
	assert.Error(t, env.Get(ns, name, &appsv1.Deployment{}), "nothing applied")

	env.Update(t, got, func() {
		got.Spec.Database = &evalhubv1.DatabaseSpec{Type: evalhubv1.DatabaseSQLite}
		got.Spec.Collections = append(got.Spec.Collections, "nowhere-v1")
	})
	got = waitEvalHub(t, ns, name, status.TypeReconciled, metav1.ConditionTrue, "ReleaseApplied")
	c := meta.FindStatusCondition(got.Status.Conditions, evalhub.TypeCollectionsReady)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, c.Message, `spec.collections[1] "nowhere-v1"`)
	assert.Equal(t, []string{"leaderboard-v2"}, got.Status.ActiveCollections)
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, name, dep))
	assert.Equal(t, int32(2), *dep.Spec.Replicas)
	hash := dep.Spec.Template.Annotations[evalhub.AnnotationConfigHash]
	assert.NotEmpty(t, hash)

	// A change of config.yaml (OTEL on) rolls the pods.
	env.Update(t, got, func() { got.Spec.Otel = &evalhubv1.OTELSpec{ExporterEndpoint: "otel:4317"} })
	env.Eventually(t, "a new configuration hash", func() error {
		if err := env.Get(ns, name, dep); err != nil {
			return err
		}
		if dep.Spec.Template.Annotations[evalhub.AnnotationConfigHash] == hash {
			return fmt.Errorf("hash unchanged")
		}
		return nil
	})
	cfg := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, name+"-config", cfg))
	assert.Contains(t, cfg.Data["config.yaml"], "exporter_endpoint: otel:4317")
}

// An object written through v1 with v1-only fields keeps them when read and
// written back through v1alpha1 (the versions share one schema; upstream's
// webhook drops them).
func TestEvalHubVersionsLoseNothing(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := &evalhubv1.EvalHub{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"},
		Spec: evalhubv1.EvalHubSpec{
			Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Tenancy: evalhubv1.TenancySingle,
			MLFlow: &evalhubv1.MLFlowSpec{TLS: &evalhubv1.MLFlowTLSSpec{CABundle: &evalhubv1.CABundleReference{Name: "mlflow-ca"}}},
		},
	}
	require.NoError(t, k8s.Create(context.Background(), cr))
	old := &evalhubv1alpha1.EvalHub{}
	require.NoError(t, env.Get(ns, "both", old))
	require.NotNil(t, old.Spec.MLFlow)
	assert.Equal(t, "ca-bundle.crt", old.Spec.MLFlow.TLS.CABundle.Key, "the default")
	env.Update(t, old, func() { old.Spec.Replicas = ptrTo(int32(1)) })
	again := &evalhubv1.EvalHub{}
	require.NoError(t, env.Get(ns, "both", again))
	assert.Equal(t, evalhubv1.TenancySingle, again.Spec.Tenancy)
	require.NotNil(t, again.Spec.MLFlow)
	assert.Equal(t, "mlflow-ca", again.Spec.MLFlow.TLS.CABundle.Name)
	// The MLflow CA ConfigMap does not exist: TrustReady names the field.
	waitEvalHub(t, ns, "both", status.TypeTrustReady, metav1.ConditionFalse, "ConfigMapNotFound")
}
