package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// The chart renders with its own defaults, as `helm template` would.
func TestLMEvalChartDefaultsRender(t *testing.T) {
	c, err := Load("lmeval-job")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, nil, render.Options{ReleaseName: "plain", Namespace: "default"})
	require.NoError(t, err)
	assert.Contains(t, out, "kind: Pod\nmetadata:\n  name: \"plain\"\n")
	assert.Contains(t, out, "resourceNames: [\"plain\"]")
	assert.NotContains(t, out, "PersistentVolumeClaim")
	declaresWhatItRenders(t, "lmeval-job", map[string]any{"managedPVC": map[string]any{"size": "1Gi"}, "caBundle": map[string]any{"data": "-----BEGIN CERTIFICATE-----"}})
}

// What the kind computes is what the chart renders: the pod spec round-trips,
// the Role reaches only this job's status, objects stay in the namespace.
func TestLMEvalChartRendersTheKindsValues(t *testing.T) {
	job := &lmv1alpha1.LMEvalJob{
		ObjectMeta: metav1.ObjectMeta{Name: "evaljob-sample", Namespace: "team-a", Generation: 2, Labels: map[string]string{"kueue.x-k8s.io/queue-name": "user-queue"}},
		Spec: lmv1alpha1.LMEvalJobSpec{Model: "hf", ModelArgs: []lmv1alpha1.Arg{{Name: "pretrained", Value: "EleutherAI/pythia-70m"}},
			TaskList: lmv1alpha1.TaskList{TaskNames: []string{"unfair_tos"}}, Limit: "5",
			Outputs: &lmv1alpha1.Outputs{PersistentVolumeClaimManaged: &lmv1alpha1.PersistentVolumeClaimManaged{Size: "5Gi"}}},
	}
	s, err := lmeval.ParseSettings(nil, nil, nil, nil, "quay.io/ai-stack-operator/ai-stack-operator:v0.1.0")
	require.NoError(t, err)
	p := lmeval.PermitsFor(&job.Spec, s)
	labels := map[string]string{"ai-stack-operator.io/managed": "true"}
	vals, err := lmeval.Values(job, s, p, labels, "", nil)
	require.NoError(t, err)
	c, err := Load("lmeval-job")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "ignored", Namespace: "team-a"})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	kinds := map[string]string{}
	for _, doc := range guard.Documents(out) {
		var m metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
		kinds[m.Kind] = doc
	}
	var pod corev1.Pod
	require.NoError(t, yaml.UnmarshalStrict([]byte(kinds["Pod"]), &pod))
	assert.Equal(t, lmeval.PodSpec(job, s, p, false), pod.Spec)
	assert.Equal(t, "evaljob-sample", pod.Name)
	assert.Equal(t, "user-queue", pod.Labels["kueue.x-k8s.io/queue-name"])
	assert.Equal(t, "ta-lmes", pod.Labels["app.kubernetes.io/name"])
	assert.Equal(t, "true", pod.Labels["ai-stack-operator.io/managed"])
	assert.Equal(t, "2", pod.Annotations[lmeval.AnnotationGeneration])
	assert.Equal(t, lmeval.SpecHash(&job.Spec), pod.Annotations[lmeval.AnnotationSpecHash])
	var role rbacv1.Role
	require.NoError(t, yaml.UnmarshalStrict([]byte(kinds["Role"]), &role))
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"trustyai.opendatahub.io"}, Resources: []string{"lmevaljobs/status"}, ResourceNames: []string{"evaljob-sample"}, Verbs: []string{"get", "patch"}}}, role.Rules)
	var pvc corev1.PersistentVolumeClaim
	require.NoError(t, yaml.UnmarshalStrict([]byte(kinds["PersistentVolumeClaim"]), &pvc))
	assert.Equal(t, "evaljob-sample-pvc", pvc.Name)
	assert.Equal(t, "5Gi", pvc.Spec.Resources.Requests.Storage().String())
	assert.True(t, strings.Contains(kinds["RoleBinding"], "name: \"evaljob-sample-lmes-driver\""))
}
