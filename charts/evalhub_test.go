package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

func renderEvalHub(t *testing.T, vals map[string]any) string {
	t.Helper()
	c, err := Load("eval-hub")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "hub", Namespace: "team-a"})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// The defaults render upstream's objects: Deployment <name> (eval-hub and
// kube-rbac-proxy), Services <name> (8443) and <name>-metrics (8081),
// ConfigMaps <name>-config (config.yaml, auth.yaml) and <name>-service-ca,
// ServiceAccount <name>-service; no MCP server, no Route on plain
// Kubernetes, no TLS Secret to wait for without a certificate creator.
func TestEvalHubChartDefaults(t *testing.T) {
	out := renderEvalHub(t, map[string]any{"capabilities": map[string]any{"route": false, "openshift": false, "certManager": false, "serviceMonitor": false}})
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "hub", &d))
	want := map[string]string{"app": "eval-hub", "instance": "hub", "component": "api"}
	assert.Equal(t, want, d.Spec.Selector.MatchLabels)
	assert.Equal(t, want, d.Spec.Template.Labels)
	assert.Equal(t, "hub-service", d.Spec.Template.Spec.ServiceAccountName)
	require.Len(t, d.Spec.Template.Spec.Containers, 2)
	hub, proxy := d.Spec.Template.Spec.Containers[0], d.Spec.Template.Spec.Containers[1]
	assert.Equal(t, "evalhub", hub.Name)
	assert.Equal(t, int32(8444), hub.Ports[0].ContainerPort)
	assert.Equal(t, "/api/v1/health", hub.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "kube-rbac-proxy", proxy.Name)
	assert.Contains(t, proxy.Args, "--upstream=http://127.0.0.1:8444/")
	assert.Contains(t, proxy.Args, "--ignore-paths=/api/v1/health")
	assert.NotContains(t, strings.Join(proxy.Args, " "), "--tls-cert-file", "no certificate creator: kube-rbac-proxy's own certificate")
	for _, v := range d.Spec.Template.Spec.Volumes {
		assert.Nil(t, v.Secret, "volume %s: no Secret exists to mount", v.Name)
	}

	var svc corev1.Service
	require.True(t, nemoObject(t, out, "Service", "hub", &svc))
	assert.Equal(t, int32(8443), svc.Spec.Ports[0].Port)
	assert.Equal(t, want, svc.Spec.Selector)
	require.True(t, nemoObject(t, out, "Service", "hub-metrics", &svc))
	assert.Equal(t, int32(8081), svc.Spec.Ports[0].Port)

	var cm corev1.ConfigMap
	require.True(t, nemoObject(t, out, "ConfigMap", "hub-config", &cm))
	var auth map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["auth.yaml"]), &auth))
	endpoints := auth["authorization"].(map[string]any)["endpoints"].([]any)
	assert.Len(t, endpoints, 7, "jobs events, jobs/*, jobs, collections/*, collections, providers/*, providers")
	assert.Contains(t, cm.Data["auth.yaml"], `namespace: "{{.FromHeader}}"`)
	assert.Contains(t, cm.Data["config.yaml"], "driver: sqlite")
	require.True(t, nemoObject(t, out, "ConfigMap", "hub-service-ca", &cm))
	assert.Equal(t, "true", cm.Annotations["service.beta.openshift.io/inject-cabundle"])
	var sa corev1.ServiceAccount
	require.True(t, nemoObject(t, out, "ServiceAccount", "hub-service", &sa))
	assert.NotContains(t, out, "kind: Route")
	assert.NotContains(t, out, "hub-mcp")
}

// On OpenShift: the service CA's serving certificates, the Route, the
// ServiceMonitor, and with MCP the MCP server's four objects.
func TestEvalHubChartOpenShiftWithMCP(t *testing.T) {
	out := renderEvalHub(t, map[string]any{
		"capabilities": map[string]any{"route": true, "openshift": true, "serviceMonitor": true},
		"mcp":          map[string]any{"enabled": true, "replicas": 2, "image": "mcp:1", "transport": "http-sse", "env": []any{map[string]any{"name": "EVALHUB_TENANT", "value": "team-a"}}},
	})
	var svc corev1.Service
	require.True(t, nemoObject(t, out, "Service", "hub", &svc))
	assert.Equal(t, "hub-tls", svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])
	require.True(t, nemoObject(t, out, "Service", "hub-mcp", &svc))
	assert.Equal(t, "hub-mcp-tls", svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "hub-mcp", &d))
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "mcp:1", c.Image)
	assert.Equal(t, []string{"--config", "/etc/evalhub-mcp/config.yaml", "--transport", "http-sse", "--host", "127.0.0.1", "--port", "8445", "--auth-type", "rbac-proxy"}, c.Args)
	assert.Contains(t, d.Spec.Template.Spec.Containers[1].Args, "--tls-cert-file=/etc/tls/private/tls.crt")
	var cm corev1.ConfigMap
	require.True(t, nemoObject(t, out, "ConfigMap", "hub-mcp-config", &cm))
	assert.Contains(t, cm.Data["config.yaml"], "base_url: https://hub.team-a.svc.cluster.local:8443")
	assert.Contains(t, cm.Data["config.yaml"], "transport: http-sse")
	assert.Contains(t, cm.Data["auth.yaml"], "subresource: proxy")
	assert.Contains(t, out, "kind: ServiceMonitor")
	assert.Equal(t, 2, strings.Count(out, "kind: Route"))
}

// Provider and collection copies are rendered and mounted in spec order;
// PostgreSQL's Secret is mounted as db-url.
func TestEvalHubChartCopiesAndDatabase(t *testing.T) {
	out := renderEvalHub(t, map[string]any{
		"providers":       []any{map[string]any{"name": "garak", "data": map[string]any{"garak.yaml": "id: garak\n"}}, map[string]any{"name": "lighteval", "data": map[string]any{"lighteval.yaml": "id: l\n"}}},
		"collections":     []any{map[string]any{"name": "leaderboard-v2", "data": map[string]any{"leaderboard-v2.yaml": "id: lb\n"}}},
		"tenantProviders": []any{"mine"},
		"database":        map[string]any{"secret": "db"},
	})
	var cm corev1.ConfigMap
	require.True(t, nemoObject(t, out, "ConfigMap", "hub-provider-garak", &cm))
	assert.Equal(t, map[string]string{"garak.yaml": "id: garak\n"}, cm.Data)
	require.True(t, nemoObject(t, out, "ConfigMap", "hub-collection-leaderboard-v2", &cm))
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "hub", &d))
	vols := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	p := vols["evalhub-providers"].Projected
	require.NotNil(t, p)
	assert.Equal(t, "hub-provider-garak", p.Sources[0].ConfigMap.Name)
	assert.Equal(t, "hub-provider-lighteval", p.Sources[1].ConfigMap.Name)
	assert.Equal(t, "mine", vols["evalhub-providers-tenant"].Projected.Sources[0].ConfigMap.Name)
	assert.Equal(t, "db", vols["evalhub-db-secret"].Secret.SecretName)
	assert.Equal(t, "db-url", vols["evalhub-db-secret"].Secret.Items[0].Key)
}

func TestEvalHubChartDeclaresEveryKindItRenders(t *testing.T) {
	declaresWhatItRenders(t, "eval-hub",
		map[string]any{"mcp": map[string]any{"enabled": true}, "capabilities": map[string]any{"route": true, "openshift": true, "serviceMonitor": true}},
		map[string]any{"mcp": map[string]any{"enabled": true}, "capabilities": map[string]any{"route": false, "openshift": false, "certManager": true, "serviceMonitor": false}},
	)
}

func TestEvalHubChartSchemaRejectsBadValues(t *testing.T) {
	c, err := Load("eval-hub")
	require.NoError(t, err)
	for name, vals := range map[string]map[string]any{
		"provider name with a slash": {"providers": []any{map[string]any{"name": "../a", "data": map[string]any{}}}},
		"MCP transport unknown":      {"mcp": map[string]any{"transport": "grpc"}},
		"env without a name":         {"env": []any{map[string]any{"name": ""}}},
		"unknown value":              {"nope": true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "x", Namespace: "default"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "schema")
		})
	}
}
