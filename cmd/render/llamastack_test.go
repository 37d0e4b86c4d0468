package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// llsdRendered decodes the rendered object of a kind.
func llsdRendered(t *testing.T, manifest, kind string, obj any) {
	t.Helper()
	for _, doc := range guard.Documents(manifest) {
		if strings.Contains(doc, "\nkind: "+kind+"\n") {
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj))
			return
		}
	}
	t.Fatalf("no %s rendered", kind)
}

// Upstream's allowedFrom examples render: "nsA" and "nsB" (no namespace
// names) are left out, "team=frontend" is a label with a value; the rest of
// the spec applies (three replicas: spread and anti-affinity, as upstream).
func TestLlamaStackAllowedFromExamplesRender(t *testing.T) {
	out, errOut, code := renderFile(t, filepath.Join("testdata", "llamastack_allowedfrom.cr.yaml"))
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "kind: NetworkPolicy", "off by default, as upstream")
	out, errOut, code = renderFile(t, filepath.Join("testdata", "llamastack_allowedfrom.cr.yaml"), "--settings", filepath.Join("testdata", "settings.yaml"))
	require.Equal(t, 0, code, errOut)

	np := &networkingv1.NetworkPolicy{}
	llsdRendered(t, out, "NetworkPolicy", np)
	from := np.Spec.Ingress[0].From
	require.Len(t, from, 6, "same namespace, operator namespace, clients, two label keys, team=frontend")
	assert.Equal(t, []string{"clients"}, from[2].NamespaceSelector.MatchExpressions[0].Values)
	assert.Equal(t, "myproject/lls-allowed", from[3].NamespaceSelector.MatchExpressions[0].Key)
	assert.Equal(t, "team/authorized", from[4].NamespaceSelector.MatchExpressions[0].Key)
	assert.Equal(t, map[string]string{"team": "frontend"}, from[5].NamespaceSelector.MatchLabels)
	assert.NotContains(t, out, "nsA")
	assert.NotContains(t, out, "nsB")

	d := &appsv1.Deployment{}
	llsdRendered(t, out, "Deployment", d)
	pod := d.Spec.Template.Spec
	require.Len(t, pod.TopologySpreadConstraints, 3)
	for i, key := range []string{"topology.kubernetes.io/region", "topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
		assert.Equal(t, key, pod.TopologySpreadConstraints[i].TopologyKey)
		assert.Equal(t, map[string]string{"app.kubernetes.io/instance": "network-example"}, pod.TopologySpreadConstraints[i].LabelSelector.MatchLabels)
	}
	require.NotNil(t, pod.Affinity)
	require.NotNil(t, pod.Affinity.PodAntiAffinity)
	assert.Len(t, pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1)
	c := pod.Containers[0]
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "HF_HOME", Value: "/.llama"})
	assert.Equal(t, "2", c.Resources.Requests.Cpu().String())
	assert.Equal(t, "1Gi", c.Resources.Requests.Memory().String())
	assert.Equal(t, "2", c.Resources.Limits.Cpu().String())
	assert.Equal(t, "1Gi", c.Resources.Limits.Memory().String())
}

// The HPA's minimum counts spec.replicas, as upstream's.
func TestLlamaStackHPAMinimumCountsReplicas(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hpa.yaml")
	require.NoError(t, os.WriteFile(file, []byte("apiVersion: llamastack.io/v1alpha1\nkind: LlamaStackDistribution\nmetadata: {name: x, namespace: ns}\nspec: {replicas: 3, server: {distribution: {name: starter}, autoscaling: {minReplicas: 2, maxReplicas: 5}}}\n"), 0o644))
	out, errOut, code := renderFile(t, file)
	require.Equal(t, 0, code, errOut)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	llsdRendered(t, out, "HorizontalPodAutoscaler", hpa)
	require.NotNil(t, hpa.Spec.MinReplicas)
	assert.Equal(t, int32(3), *hpa.Spec.MinReplicas)
}
