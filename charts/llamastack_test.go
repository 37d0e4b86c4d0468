package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// renderLLSD renders the llama-stack-distribution chart as `helm template`
// would, for the release "plain", and checks it with the guard.
func renderLLSD(t *testing.T, vals map[string]any) string {
	t.Helper()
	c, err := Load("llama-stack-distribution")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "plain", Namespace: "team-a"})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// llsdObject decodes the rendered object of a kind into obj; false when there is none.
func llsdObject(t *testing.T, manifest, kind string, obj any) bool {
	t.Helper()
	for _, doc := range guard.Documents(manifest) {
		if strings.Contains(doc, "\nkind: "+kind+"\n") {
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj))
			return true
		}
	}
	return false
}

func llsdDeployment(t *testing.T, vals map[string]any) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	require.True(t, llsdObject(t, renderLLSD(t, vals), "Deployment", d), "no Deployment")
	return d
}

// More than one replica: upstream's spread (regions, zones, nodes) and
// preferred anti-affinity, selecting the pods by their instance label.
func TestLlamaStackChartSpreadAndAntiAffinity(t *testing.T) {
	instance := func(d *appsv1.Deployment) *metav1.LabelSelector {
		v := d.Spec.Template.Labels["app.kubernetes.io/instance"]
		require.NotEmpty(t, v, "the pods carry the instance label")
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": v}}
	}
	spread := func(d *appsv1.Deployment) []corev1.TopologySpreadConstraint {
		var out []corev1.TopologySpreadConstraint
		for _, key := range []string{"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
			out = append(out, corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: instance(d)})
		}
		return out
	}
	antiAffinity := func(d *appsv1.Deployment) *corev1.Affinity {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight:          100,
			PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: instance(d), TopologyKey: "kubernetes.io/hostname"},
		}}}}
	}

	d := llsdDeployment(t, map[string]any{"replicas": 2})
	assert.Equal(t, spread(d), d.Spec.Template.Spec.TopologySpreadConstraints)
	assert.Equal(t, antiAffinity(d), d.Spec.Template.Spec.Affinity)
	assert.Equal(t, "plain", d.Spec.Template.Labels["app.kubernetes.io/instance"])

	// A long name: the selector uses the label's value (cut with a hash), which the pods carry.
	long := strings.Repeat("n", 70)
	d = llsdDeployment(t, map[string]any{"replicas": 3, "name": long})
	assert.NotEqual(t, long, d.Spec.Template.Labels["app.kubernetes.io/instance"])
	assert.Equal(t, spread(d), d.Spec.Template.Spec.TopologySpreadConstraints)
	assert.Equal(t, antiAffinity(d), d.Spec.Template.Spec.Affinity)

	// The user's constraints replace the default spread; the anti-affinity stays.
	own := []any{map[string]any{"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}}
	d = llsdDeployment(t, map[string]any{"replicas": 2, "topologySpreadConstraints": own})
	require.Len(t, d.Spec.Template.Spec.TopologySpreadConstraints, 1)
	assert.Equal(t, int32(2), d.Spec.Template.Spec.TopologySpreadConstraints[0].MaxSkew)
	assert.Equal(t, antiAffinity(d), d.Spec.Template.Spec.Affinity)

	// Autoscaling up to more than one pod counts as more than one replica (a
	// choice of ours: upstream looks at spec.replicas only).
	d = llsdDeployment(t, map[string]any{"replicas": 1, "autoscaling": map[string]any{"maxReplicas": 3}})
	assert.Equal(t, spread(d), d.Spec.Template.Spec.TopologySpreadConstraints)
	assert.Equal(t, antiAffinity(d), d.Spec.Template.Spec.Affinity)

	// One pod: neither.
	for _, vals := range []map[string]any{nil, {"replicas": 1}, {"replicas": 0}, {"replicas": 4, "autoscaling": map[string]any{"maxReplicas": 1}}} {
		d = llsdDeployment(t, vals)
		assert.Empty(t, d.Spec.Template.Spec.TopologySpreadConstraints, "%v", vals)
		assert.Nil(t, d.Spec.Template.Spec.Affinity, "%v", vals)
	}
}

// HF_HOME (the HuggingFace cache) is the storage mount path, before the user's env (which wins).
func TestLlamaStackChartHFHome(t *testing.T) {
	env := func(d *appsv1.Deployment) []corev1.EnvVar { return d.Spec.Template.Spec.Containers[0].Env }
	assert.Contains(t, env(llsdDeployment(t, nil)), corev1.EnvVar{Name: "HF_HOME", Value: "/.llama"})
	assert.Contains(t, env(llsdDeployment(t, map[string]any{"storage": map[string]any{"enabled": true, "mountPath": "/data"}})), corev1.EnvVar{Name: "HF_HOME", Value: "/data"})
	assert.Contains(t, env(llsdDeployment(t, map[string]any{"storage": map[string]any{"mountPath": "/scratch"}})), corev1.EnvVar{Name: "HF_HOME", Value: "/scratch"}, "without a claim too: the emptyDir")

	e := env(llsdDeployment(t, map[string]any{"container": map[string]any{"name": "llama-stack", "port": 8321, "env": []any{map[string]any{"name": "HF_HOME", "value": "/models"}}}}))
	last := -1
	for i, v := range e {
		if v.Name == "HF_HOME" {
			last = i
		}
	}
	require.GreaterOrEqual(t, last, 0)
	assert.Equal(t, "/models", e[last].Value, "the user's HF_HOME comes last, and wins")
}

// The HPA's minimum is the largest of 1, replicas and minReplicas, at most maxReplicas.
func TestLlamaStackChartHPAMinReplicas(t *testing.T) {
	for _, tt := range []struct {
		name string
		vals map[string]any
		want int32
	}{
		{"defaults", map[string]any{"autoscaling": map[string]any{"maxReplicas": 5}}, 1},
		{"replicas", map[string]any{"replicas": 3, "autoscaling": map[string]any{"maxReplicas": 5}}, 3},
		{"minReplicas", map[string]any{"replicas": 2, "autoscaling": map[string]any{"minReplicas": 4, "maxReplicas": 5}}, 4},
		{"replicas over minReplicas", map[string]any{"replicas": 3, "autoscaling": map[string]any{"minReplicas": 2, "maxReplicas": 5}}, 3},
		{"replicas over maxReplicas", map[string]any{"replicas": 7, "autoscaling": map[string]any{"maxReplicas": 5}}, 5},
		{"zero replicas", map[string]any{"replicas": 0, "autoscaling": map[string]any{"maxReplicas": 5}}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hpa := &autoscalingv2.HorizontalPodAutoscaler{}
			require.True(t, llsdObject(t, renderLLSD(t, tt.vals), "HorizontalPodAutoscaler", hpa))
			require.NotNil(t, hpa.Spec.MinReplicas)
			assert.Equal(t, tt.want, *hpa.Spec.MinReplicas)
		})
	}
}

// networkPolicy.allowedNamespaceMatchLabels: each entry admits the
// namespaces carrying its labels with those values.
func TestLlamaStackChartAllowedNamespaceMatchLabels(t *testing.T) {
	out := renderLLSD(t, map[string]any{"networkPolicy": map[string]any{
		"enabled":                     true,
		"allowedNamespaceLabels":      []any{"llama-access"},
		"allowedNamespaceMatchLabels": []any{map[string]any{"team": "frontend"}, map[string]any{"example.com/tier": "gold", "env": "prod"}},
	}})
	np := &networkingv1.NetworkPolicy{}
	require.True(t, llsdObject(t, out, "NetworkPolicy", np))
	from := np.Spec.Ingress[0].From
	require.Len(t, from, 4, "same namespace, a label key, two key=value entries")
	assert.Equal(t, []metav1.LabelSelectorRequirement{{Key: "llama-access", Operator: metav1.LabelSelectorOpExists}}, from[1].NamespaceSelector.MatchExpressions)
	assert.Equal(t, map[string]string{"team": "frontend"}, from[2].NamespaceSelector.MatchLabels)
	assert.Equal(t, map[string]string{"example.com/tier": "gold", "env": "prod"}, from[3].NamespaceSelector.MatchLabels)
}

// With a run configuration (userConfig's ConfigMap or the typed config) and
// no command or args of the user's, the server is started on it: the
// images' entrypoints start their built-in distribution, and that start
// argument wins over LLAMA_STACK_CONFIG. The user's command or args win.
func TestLlamaStackChartStartsOnTheRunConfiguration(t *testing.T) {
	container := func(vals map[string]any) corev1.Container {
		d := llsdDeployment(t, vals)
		return d.Spec.Template.Spec.Containers[0]
	}
	plain := container(map[string]any{})
	assert.Empty(t, plain.Command, "without a run configuration the image's entrypoint runs")

	withConfig := container(map[string]any{"userConfig": map[string]any{"configMapName": "mine"}})
	require.Len(t, withConfig.Command, 3)
	assert.Equal(t, []string{"/bin/sh", "-c"}, withConfig.Command[:2])
	script := withConfig.Command[2]
	for _, want := range []string{
		`exec python3 -m llama_stack.distribution.server.server --config "$cfg"`,
		`exec python3 -m llama_stack.core.server.server "$cfg"`,
		`exec uvicorn llama_stack.core.server.server:create_app "$@"`, "--factory --host 0.0.0.0",
		"cfg=${LLAMA_STACK_CONFIG:-/etc/llama-stack/config.yaml}",
	} {
		assert.Contains(t, script, want)
	}
	assert.Empty(t, withConfig.Args)

	own := container(map[string]any{"userConfig": map[string]any{"configMapName": "mine"}, "container": map[string]any{"command": []any{"my-server"}}})
	assert.Equal(t, []string{"my-server"}, own.Command)
	args := container(map[string]any{"userConfig": map[string]any{"configMapName": "mine"}, "container": map[string]any{"args": []any{"--port", "9"}}})
	assert.Empty(t, args.Command, "the user's args run with the image's entrypoint")
}

// anyuid on OpenShift: upstream's <name>-rb binding of the ServiceAccount to
// the anyuid SCC, and pods as upstream runs them there (fsGroup only); off,
// or off OpenShift, no binding and restricted pods.
func TestLlamaStackChartAnyUIDBinding(t *testing.T) {
	for name, tc := range map[string]struct {
		anyuid, openshift bool
		binding           bool
	}{
		"on, OpenShift":      {anyuid: true, openshift: true, binding: true},
		"on, not OpenShift":  {anyuid: true},
		"off, OpenShift":     {openshift: true},
		"off, not OpenShift": {},
	} {
		t.Run(name, func(t *testing.T) {
			vals := map[string]any{"name": "llama", "anyuid": map[string]any{"enabled": tc.anyuid}, "capabilities": map[string]any{"openshift": tc.openshift}}
			out := renderLLSD(t, vals)
			rb := &rbacv1.RoleBinding{}
			require.Equal(t, tc.binding, llsdObject(t, out, "RoleBinding", rb))
			d := &appsv1.Deployment{}
			require.True(t, llsdObject(t, out, "Deployment", d))
			sc := d.Spec.Template.Spec.SecurityContext
			if !tc.binding {
				require.NotNil(t, sc.RunAsNonRoot)
				assert.True(t, *sc.RunAsNonRoot, "restricted pods")
				return
			}
			assert.Equal(t, "llama-rb", rb.Name)
			assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:openshift:scc:anyuid"}, rb.RoleRef)
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: "team-a"}}, rb.Subjects)
			assert.Equal(t, "llama-sa", d.Spec.Template.Spec.ServiceAccountName)
			assert.Nil(t, sc.RunAsNonRoot, "the image's own user, as upstream runs it under anyuid")
			assert.Nil(t, sc.RunAsUser)
			require.NotNil(t, sc.FSGroup)
			assert.Equal(t, int64(1001), *sc.FSGroup)
		})
	}
}

// The probes follow how the server answers: GET /v1/health over http, over
// https for a server with TLS, a TCP connect when it requires client
// certificates (which the kubelet cannot present).
func TestLlamaStackChartProbesFollowTheServersTLS(t *testing.T) {
	for serves, check := range map[string]func(*testing.T, *corev1.Probe){
		"": func(t *testing.T, p *corev1.Probe) {
			require.NotNil(t, p.HTTPGet)
			assert.Equal(t, "/v1/health", p.HTTPGet.Path)
			assert.Empty(t, p.HTTPGet.Scheme)
		},
		"https": func(t *testing.T, p *corev1.Probe) {
			require.NotNil(t, p.HTTPGet)
			assert.Equal(t, corev1.URISchemeHTTPS, p.HTTPGet.Scheme)
		},
		"mtls": func(t *testing.T, p *corev1.Probe) {
			assert.Nil(t, p.HTTPGet)
			require.NotNil(t, p.TCPSocket)
			assert.Equal(t, "http", p.TCPSocket.Port.String())
		},
	} {
		t.Run("serves "+serves, func(t *testing.T) {
			vals := map[string]any{}
			if serves != "" {
				vals["container"] = map[string]any{"name": "llama-stack", "port": 8321, "serves": serves}
			}
			c := llsdDeployment(t, vals).Spec.Template.Spec.Containers[0]
			for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
				require.NotNil(t, p)
				check(t, p)
			}
		})
	}
}
