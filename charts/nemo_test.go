package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

func renderNemo(t *testing.T, vals map[string]any) string {
	t.Helper()
	c, err := Load("nemo-guardrails")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "guard", Namespace: "team-a"})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// nemoObject decodes the rendered object of a kind and name; false when absent.
func nemoObject(t *testing.T, manifest, kind, name string, obj any) bool {
	t.Helper()
	for _, doc := range guard.Documents(manifest) {
		if strings.Contains(doc, "\nkind: "+kind+"\n") && strings.Contains(doc, "\n  name: \""+name+"\"\n") {
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj))
			return true
		}
	}
	return false
}

// The defaults render upstream's objects without auth: Deployment and
// Service <name> (80 -> 8000, the port named after the server), the
// service-CA ConfigMap <name>-ca-bundle; no proxy, no ServiceAccount.
func TestNemoChartDefaults(t *testing.T) {
	out := renderNemo(t, nil)
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "guard", &d))
	assert.Equal(t, map[string]string{"app": "guard"}, d.Spec.Selector.MatchLabels)
	for k, v := range map[string]string{"app": "guard", "component": "guard", "deploy-name": "guard", "app.kubernetes.io/part-of": "trustyai"} {
		assert.Equal(t, v, d.Spec.Template.Labels[k], k)
	}
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "nemo-guardrails", c.Name)
	assert.Equal(t, "quay.io/trustyai/nemo-guardrails-server:latest", c.Image)
	assert.Equal(t, []corev1.EnvVar{{Name: "CONFIG_ID", Value: "default"}}, c.Env)
	assert.Equal(t, "/app/config/default", c.VolumeMounts[0].MountPath)
	assert.Empty(t, d.Spec.Template.Spec.ServiceAccountName)

	var svc corev1.Service
	require.True(t, nemoObject(t, out, "Service", "guard", &svc))
	assert.Equal(t, []corev1.ServicePort{{Name: "guard", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intOrString(8000)}}, svc.Spec.Ports)
	assert.Equal(t, map[string]string{"app": "guard", "component": "guard"}, svc.Spec.Selector)

	var ca corev1.ConfigMap
	require.True(t, nemoObject(t, out, "ConfigMap", "guard-ca-bundle", &ca))
	assert.Equal(t, "true", ca.Annotations["service.beta.openshift.io/inject-cabundle"])
	assert.NotContains(t, out, "- name: kube-rbac-proxy")
	assert.NotContains(t, out, "rbac-proxy-config")
	assert.NotContains(t, out, "kind: ServiceAccount")
}

// Auth puts kube-rbac-proxy in front (443 -> 8443, health 9444), with its
// ConfigMap, ServiceAccount and, on OpenShift, the service CA's serving
// certificate and a reencrypt Route.
func TestNemoChartAuthOnOpenShift(t *testing.T) {
	out := renderNemo(t, map[string]any{"auth": true, "capabilities": map[string]any{"openshift": true, "route": true}, "trust": map[string]any{"configMapName": "guard-merged-ca-bundle"}})
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "guard", &d))
	assert.Equal(t, "guard-serviceaccount", d.Spec.Template.Spec.ServiceAccountName)
	proxy := container(&d, "kube-rbac-proxy")
	assert.Contains(t, proxy.Args, "--tls-cert-file=/etc/tls/private/tls.crt")
	assert.Contains(t, proxy.Args, "--upstream-ca-file=/etc/ssl/certs/ca-certificates.crt")
	assert.Contains(t, proxy.Args, "--proxy-endpoints-port=9444")
	assert.Equal(t, "/etc/ssl/certs/ca-certificates.crt", envOf(container(&d, "nemo-guardrails"))["SSL_CERT_FILE"])

	var svc corev1.Service
	require.True(t, nemoObject(t, out, "Service", "guard", &svc))
	assert.Equal(t, int32(443), svc.Spec.Ports[0].Port)
	assert.Equal(t, "guard-tls", svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])
	assert.Contains(t, out, "termination: reencrypt")
	assert.Contains(t, out, `resourceName: "guard-service"`)
	var sa corev1.ServiceAccount
	assert.True(t, nemoObject(t, out, "ServiceAccount", "guard-serviceaccount", &sa))

	plain := renderNemo(t, map[string]any{"capabilities": map[string]any{"route": true}})
	assert.Contains(t, plain, "termination: edge")
}

// Off OpenShift without cert-manager the proxy makes its own certificate:
// no Secret <name>-tls is mounted that nothing would create.
func TestNemoChartAuthWithoutACertificateCreator(t *testing.T) {
	out := renderNemo(t, map[string]any{"auth": true, "capabilities": map[string]any{"openshift": false, "certManager": false, "route": false}})
	assert.NotContains(t, out, "guard-tls")
	withCM := renderNemo(t, map[string]any{"auth": true, "capabilities": map[string]any{"openshift": false, "certManager": true, "route": false}})
	assert.Contains(t, withCM, "kind: Certificate")
	assert.Contains(t, withCM, `secretName: "guard-tls"`)
}

// Each configuration is one projected volume of all its ConfigMaps (two
// ConfigMaps of one configuration share its directory, which separate
// mounts at one path could not), and the user's env comes after the
// operator's, quoted whatever it holds.
func TestNemoChartConfigsAndEnv(t *testing.T) {
	out := renderNemo(t, map[string]any{
		"configs":       []any{map[string]any{"name": "a", "configMaps": []any{"a1", "a2"}}, map[string]any{"name": "b_2", "configMaps": []any{"b"}}},
		"defaultConfig": "b_2",
		"env":           []any{map[string]any{"name": "X", "value": "a: b\n- {{ c }}"}},
		"pod":           map[string]any{"nodeSelector": map[string]any{"pool": "gpu"}, "tolerations": []any{map[string]any{"key": "k", "operator": "Exists"}}},
	})
	var d appsv1.Deployment
	require.True(t, nemoObject(t, out, "Deployment", "guard", &d))
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []corev1.EnvVar{{Name: "CONFIG_ID", Value: "b_2"}, {Name: "X", Value: "a: b\n- {{ c }}"}}, c.Env)
	assert.Equal(t, "/app/config/a", c.VolumeMounts[0].MountPath)
	assert.Equal(t, "/app/config/b_2", c.VolumeMounts[1].MountPath)
	v := d.Spec.Template.Spec.Volumes[0]
	require.NotNil(t, v.Projected)
	assert.Equal(t, "a1", v.Projected.Sources[0].ConfigMap.Name)
	assert.Equal(t, "a2", v.Projected.Sources[1].ConfigMap.Name)
	assert.Equal(t, map[string]string{"pool": "gpu"}, d.Spec.Template.Spec.NodeSelector)
	assert.Equal(t, "k", d.Spec.Template.Spec.Tolerations[0].Key)
}

func TestNemoChartDeclaresEveryKindItRenders(t *testing.T) {
	declaresWhatItRenders(t, "nemo-guardrails",
		map[string]any{"auth": true, "capabilities": map[string]any{"route": true, "openshift": true}},
		map[string]any{"auth": true, "capabilities": map[string]any{"route": false, "openshift": false, "certManager": true}, "ingress": map[string]any{"host": "g.example.com"}},
	)
}

func TestNemoChartSchemaRejectsBadValues(t *testing.T) {
	c, err := Load("nemo-guardrails")
	require.NoError(t, err)
	for name, vals := range map[string]map[string]any{
		"config without ConfigMaps": {"configs": []any{map[string]any{"name": "a", "configMaps": []any{}}}},
		"config name with a slash":  {"configs": []any{map[string]any{"name": "../a", "configMaps": []any{"x"}}}},
		"unknown value":             {"nope": true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "x", Namespace: "default"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "schema")
		})
	}
}

func intOrString(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

// The Ingress names its backend's port by number: the Service's port is
// named after the server (upstream's), and an Ingress backend's port name
// may have 15 characters at most (a longer one is refused by the API server).
func TestNemoChartIngressBackendPort(t *testing.T) {
	for auth, port := range map[bool]int32{false: 80, true: 443} {
		out := renderNemo(t, map[string]any{"name": "a-rather-long-guardrails-name", "auth": auth, "capabilities": map[string]any{"route": false, "openshift": false, "certManager": false}, "ingress": map[string]any{"host": "g.example.com"}})
		var ing networkingv1.Ingress
		require.True(t, nemoObject(t, out, "Ingress", "a-rather-long-guardrails-name", &ing))
		backend := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
		assert.Empty(t, backend.Port.Name)
		assert.Equal(t, port, backend.Port.Number, "auth %v", auth)
	}
}
