package trustyai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
)

// Names of 55 to 59 characters, which the CRD admits, wire ModelMesh with a
// volume the API server accepts (<name>-internal would be 64 to 68
// characters), mounting Secret <name>-internal; a Deployment wired so is
// not written again.
func TestModelMeshVolumeOfLongNames(t *testing.T) {
	for _, n := range []int{54, 55, 59} {
		cr := sample(t, nil)
		cr.Name = strings.Repeat("m", n)
		want := modelMeshWantOf(cr, platform.TLSCertManager)
		plan := planModelMesh(modelMesh(), want)
		require.Empty(t, plan.problem)
		spec := plan.cfg.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		vol := spec["volumes"].([]any)[0].(map[string]any)
		assert.Empty(t, validation.IsDNS1123Label(vol["name"].(string)), "%d: volume %q", n, vol["name"])
		assert.Equal(t, cr.Name+"-internal", vol["secret"].(map[string]any)["secretName"], "the Secret keeps its name")
		mount := spec["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any)[0].(map[string]any)
		assert.Equal(t, vol["name"], mount["name"])

		d := modelMesh(corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: want.URL}, corev1.EnvVar{Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"})
		d.Spec.Template.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: vol["name"].(string), MountPath: "/etc/trustyai/tls", ReadOnly: true}}
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: vol["name"].(string), VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: cr.Name + "-internal"}}}}
		assert.True(t, planModelMesh(d, want).done(), "%d: a wired Deployment is not written again", n)
	}
}
