package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// renderOGX renders the ogx-server chart as `helm template` would, for the
// release "plain", and checks it with the guard.
func renderOGX(t *testing.T, vals map[string]any) string {
	t.Helper()
	c, err := Load("ogx-server")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "plain", Namespace: "team-a"})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// ogxObject decodes the rendered object of a kind into obj; false when there is none.
func ogxObject(t *testing.T, manifest, kind string, obj any) bool {
	t.Helper()
	for _, doc := range guard.Documents(manifest) {
		if strings.Contains(doc, "\nkind: "+kind+"\n") {
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj))
			return true
		}
	}
	return false
}

func ogxContainer(t *testing.T, vals map[string]any) corev1.Container {
	t.Helper()
	d := &appsv1.Deployment{}
	require.True(t, ogxObject(t, renderOGX(t, vals), "Deployment", d), "no Deployment")
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	return d.Spec.Template.Spec.Containers[0]
}

func ogxEnv(c corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			v = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
		out = append(out, e.Name+"="+v)
	}
	return out
}

// With plain defaults: upstream's names, labels, port, env and mount path.
func TestOGXChartDefaults(t *testing.T) {
	out := renderOGX(t, nil)
	for _, name := range []string{`"plain"`, `"plain-service"`, `"plain-sa"`, `"plain-network-policy"`} {
		assert.Contains(t, out, "  name: "+name+"\n")
	}
	assert.NotContains(t, out, "PersistentVolumeClaim")
	c := ogxContainer(t, nil)
	assert.Equal(t, "ogx", c.Name)
	assert.Equal(t, []string{"HF_HOME=/.ogx", "OGX_WORKERS=1", "OGX_PORT=8321",
		"OGX_METRICS_ENDPOINT_ENABLED=1", "OGX_METRICS_HOST=0.0.0.0", "OGX_METRICS_PORT=9464"}, ogxEnv(c))
	require.Len(t, c.Ports, 2)
	assert.Equal(t, int32(8321), c.Ports[0].ContainerPort)
	assert.Equal(t, "metrics", c.Ports[1].Name)
	assert.Equal(t, "/.ogx", c.VolumeMounts[0].MountPath)

	svc := &corev1.Service{}
	require.True(t, ogxObject(t, out, "Service", svc))
	assert.Equal(t, map[string]string{"app": "ogx", "app.kubernetes.io/instance": "plain"}, svc.Spec.Selector)
	require.Len(t, svc.Spec.Ports, 2)
	assert.Equal(t, "http", svc.Spec.Ports[0].Name)
	assert.Equal(t, int32(8321), svc.Spec.Ports[0].TargetPort.IntVal)
}

// A configuration: mounted at /etc/ogx/config.yaml with OGX_CONFIG; a
// generated one in its own immutable ConfigMap; Secret-backed variables
// from secretKeyRef; the user's env replaces the operator's of the same name.
func TestOGXChartConfigAndEnv(t *testing.T) {
	vals := map[string]any{
		"config":                         map[string]any{"generated": "version: \"2\"\n", "generatedName": "plain-config-0123456789abcdef"},
		"secretEnv":                      []any{map[string]any{"name": "OGX_OPENAI_API_KEY", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "keys", "key": "openai"}}}},
		"container":                      map[string]any{"port": 8321, "env": []any{map[string]any{"name": "OGX_WORKERS", "value": "4"}, map[string]any{"name": "EXTRA", "value": "x"}}},
		"monitoring":                     map[string]any{"enabled": false},
		"registryRefreshIntervalSeconds": 30,
	}
	out := renderOGX(t, vals)
	cm := &corev1.ConfigMap{}
	require.True(t, ogxObject(t, out, "ConfigMap", cm))
	assert.Equal(t, "plain-config-0123456789abcdef", cm.Name)
	assert.True(t, *cm.Immutable)
	assert.Equal(t, "version: \"2\"\n", cm.Data["config.yaml"])
	c := ogxContainer(t, vals)
	assert.Equal(t, []string{"HF_HOME=/.ogx", "OGX_PORT=8321", "RUN_CONFIG_PATH=/etc/ogx/config.yaml", "OGX_CONFIG=/etc/ogx/config.yaml",
		"OGX_REGISTRY_REFRESH_INTERVAL_SECONDS=30", "OGX_OPENAI_API_KEY=secret:keys/openai", "OGX_WORKERS=4", "EXTRA=x"}, ogxEnv(c))
	assert.NotContains(t, out, "name: metrics")

	user := ogxContainer(t, map[string]any{"config": map[string]any{"configMapName": "mine", "key": "run.yaml"}})
	assert.Contains(t, ogxEnv(user), "OGX_CONFIG=/etc/ogx/config.yaml")
	d := &appsv1.Deployment{}
	require.True(t, ogxObject(t, renderOGX(t, map[string]any{"config": map[string]any{"configMapName": "mine", "key": "run.yaml"}}), "Deployment", d))
	var found bool
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == "mine" {
			found = true
			assert.Equal(t, "run.yaml", v.ConfigMap.Items[0].Key)
			assert.Equal(t, "config.yaml", v.ConfigMap.Items[0].Path)
		}
	}
	assert.True(t, found, "the user's ConfigMap is mounted")
}

// The NetworkPolicy: the defaults plus the user's rules; Egress keeps DNS.
func TestOGXChartNetworkPolicy(t *testing.T) {
	np := &networkingv1.NetworkPolicy{}
	require.True(t, ogxObject(t, renderOGX(t, map[string]any{"networkPolicy": map[string]any{"enabled": true, "operatorNamespace": "op"}}), "NetworkPolicy", np))
	assert.Equal(t, []networkingv1.PolicyType{"Ingress"}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Ingress, 2, "the server's port and the metrics port")
	assert.Len(t, np.Spec.Ingress[0].From, 2)
	assert.Empty(t, np.Spec.Egress)

	user := map[string]any{"networkPolicy": map[string]any{"enabled": true, "openshiftIngress": true,
		"ingress": []any{map[string]any{"from": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "a"}}}}}},
		"egress":  []any{map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8"}}}}}}}
	np = &networkingv1.NetworkPolicy{}
	require.True(t, ogxObject(t, renderOGX(t, user), "NetworkPolicy", np))
	assert.Equal(t, []networkingv1.PolicyType{"Ingress", "Egress"}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Ingress, 3)
	assert.Equal(t, "a", np.Spec.Ingress[2].From[0].NamespaceSelector.MatchLabels["team"])
	assert.Len(t, np.Spec.Ingress[0].From, 2, "same namespace and the router (no operator namespace given)")
	require.Len(t, np.Spec.Egress, 2)
	assert.Equal(t, "kube-dns", np.Spec.Egress[0].To[0].PodSelector.MatchLabels["k8s-app"])

	assert.False(t, ogxObject(t, renderOGX(t, map[string]any{"networkPolicy": map[string]any{"enabled": false}}), "NetworkPolicy", np))
}

// Every kind the chart renders, with every switch on, is one it declares.
func TestOGXChartDeclaresEveryKindItRenders(t *testing.T) {
	base := map[string]any{
		"storage":             map[string]any{"enabled": true},
		"config":              map[string]any{"generated": "version: \"2\"\n"},
		"autoscaling":         map[string]any{"maxReplicas": 3},
		"podDisruptionBudget": map[string]any{"maxUnavailable": 1},
		"expose":              map[string]any{"enabled": true},
		"trust":               map[string]any{"serviceCA": true, "clusterTrustedCA": true},
		"anyuid":              map[string]any{"enabled": true},
	}
	var sets []map[string]any
	for _, caps := range []map[string]any{{"route": false, "serviceMonitor": true, "prometheusRule": true}, {"route": true, "openshift": true}} {
		v := map[string]any{"capabilities": caps}
		for k, x := range base {
			v[k] = x
		}
		sets = append(sets, v)
	}
	declaresWhatItRenders(t, "ogx-server", sets...)
}

// values.schema.json rejects values that would render nonsense.
func TestOGXChartSchemaRejectsBadValues(t *testing.T) {
	c, err := Load("ogx-server")
	require.NoError(t, err)
	for name, vals := range map[string]map[string]any{
		"negative replicas": {"replicas": -1},
		"port out of range": {"container": map[string]any{"port": 70000}},
		"relative mount":    {"storage": map[string]any{"mountPath": "data"}},
		"unknown value":     {"nope": true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "x", Namespace: "default"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "schema")
		})
	}
}
