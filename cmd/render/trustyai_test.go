package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// tasCR is a TrustyAIService in PVC mode with the given name, folder and
// batch size.
func tasCR(t *testing.T, name, folder, batchSize string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tas.yaml")
	cr := fmt.Sprintf(`apiVersion: trustyai.opendatahub.io/v1
kind: TrustyAIService
metadata: {name: %s, namespace: team-a}
spec:
  storage: {format: PVC, folder: %q, size: 1Gi}
  data: {filename: data.csv, format: CSV}
  metrics: {schedule: 5s, batchSize: %s}
`, name, folder, batchSize)
	require.NoError(t, os.WriteFile(p, []byte(cr), 0o644))
	return p
}

// variants are the platforms the goldens cover, and cert-manager's.
var tasVariants = [][]string{nil, {"--openshift"}, {"--api-versions", "cert-manager.io/v1"}, {"--openshift", "--api-versions", "monitoring.coreos.com/v1"}}

// Finding 7: off OpenShift, render (which reads no operator settings) shows
// no Ingress: nothing is exposed unless the administrator sets
// trustyai-ingress-domain.
func TestTrustyAIRendersNoIngressByDefault(t *testing.T) {
	out, errOut, code := renderFile(t, tasCR(t, "t", "/inputs", "5000"))
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "kind: Ingress")
	out, errOut, code = renderFile(t, tasCR(t, "t", "/inputs", "5000"), "--openshift")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "kind: Route")
}

// Istio's routes offline: render reads no InferenceService, so Istio's and
// KServe's APIs given stand for a model server with a sidecar; the capability
// line names Istio's group once. Without a certificate creator (no https
// port to route to) or without either API, none.
func TestTrustyAIRendersIstioRoutesWhenAsked(t *testing.T) {
	const mesh = "networking.istio.io/v1beta1,serving.kserve.io/v1beta1"
	for _, flags := range [][]string{{"--openshift", "--api-versions", mesh}, {"--api-versions", mesh + ",cert-manager.io/v1"}} {
		out, errOut, code := renderFile(t, tasCR(t, "t", "/inputs", "5000"), flags...)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "kind: DestinationRule\nmetadata:\n  name: \"t-internal\"\n", flags)
		assert.Contains(t, out, "kind: VirtualService\nmetadata:\n  name: \"t-redirect\"\n", flags)
		assert.Contains(t, out, "serving.kserve.io/v1beta1: yes, networking.istio.io/v1beta1: yes)\n", flags)
	}
	for _, flags := range [][]string{{"--api-versions", mesh}, {"--openshift", "--api-versions", "networking.istio.io/v1beta1"}, {"--openshift", "--api-versions", "serving.kserve.io/v1beta1"}, {"--openshift"}} {
		out, errOut, code := renderFile(t, tasCR(t, "t", "/inputs", "5000"), flags...)
		require.Equal(t, 0, code, errOut)
		assert.NotContains(t, out, "networking.istio.io/v1beta1\n", flags)
	}
}

// Finding 8: every batch size the CRD admits renders as it is.
func TestTrustyAIBatchSizeRendersExactly(t *testing.T) {
	for _, n := range []string{"1", "9007199254740993", "9223372036854775807"} {
		out, errOut, code := renderFile(t, tasCR(t, "t", "/inputs", n))
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "- name: SERVICE_BATCH_SIZE\n              value: \""+n+"\"\n", n)
	}
}

// Finding 8: a folder on, in or over another mount path of the container is
// refused, naming the field and the path, on every platform.
func TestTrustyAIFolderCollisionRefused(t *testing.T) {
	for folder, path := range map[string]string{
		"/etc/tls/internal":           "/etc/tls/internal",
		"/etc/tls/internal/sub":       "/etc/tls/internal",
		"/etc/tls/db":                 "/etc/tls/db",
		"/etc/pki/ai-stack-operator/": "/etc/pki/ai-stack-operator",
		"/etc/tls":                    "/etc/tls/internal",
	} {
		for _, v := range tasVariants {
			_, errOut, code := renderFile(t, tasCR(t, "t", folder, "5000"), v...)
			assert.Equal(t, 1, code, "%s %v", folder, v)
			assert.Contains(t, errOut, fmt.Sprintf("spec.storage.folder: %q collides with %s", folder, path), v)
		}
	}
}

// Finding 8: names of 55 to 59 characters, which the CRD admits, render
// Deployments whose volume names are DNS labels, on every platform.
func TestTrustyAILongNamesRender(t *testing.T) {
	for _, name := range []string{strings.Repeat("t", 55), strings.Repeat("t", 59)} {
		for _, v := range tasVariants {
			out, errOut, code := renderFile(t, tasCR(t, name, "/inputs", "5000"), v...)
			require.Equal(t, 0, code, "%v: %s", v, errOut)
			found := false
			for _, doc := range guard.Documents(out) {
				if !strings.Contains(doc, "kind: Deployment\n") {
					continue
				}
				found = true
				d := &appsv1.Deployment{}
				require.NoError(t, yaml.Unmarshal([]byte(doc), d))
				for _, vol := range d.Spec.Template.Spec.Volumes {
					assert.Empty(t, validation.IsDNS1123Label(vol.Name), "%v: volume %q", v, vol.Name)
				}
			}
			assert.True(t, found, "a Deployment")
		}
	}
}

// tasCRWith is a TrustyAIService of the given version, storage, replicas
// ("" for unset) and schedule.
func tasCRWith(t *testing.T, version, storage, replicas, schedule string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tas.yaml")
	spec := fmt.Sprintf("  storage: %s\n  data: {filename: data.csv, format: CSV}\n  metrics: {schedule: %q}\n", storage, schedule)
	if replicas != "" {
		spec = "  replicas: " + replicas + "\n" + spec
	}
	cr := fmt.Sprintf("apiVersion: trustyai.opendatahub.io/%s\nkind: TrustyAIService\nmetadata: {name: t, namespace: team-a}\nspec:\n%s", version, spec)
	require.NoError(t, os.WriteFile(p, []byte(cr), 0o644))
	return p
}

const (
	tasPVC      = "{format: PVC, folder: /inputs, size: 1Gi}"
	tasDatabase = "{format: DATABASE, databaseConfigurations: db}"
)

// The render path admits a CR as the API server does (schema, then the CRD's
// CEL rules): metrics.schedule in both forms the service parses reaches it as
// written, in v1 and v1alpha1; a schedule it cannot read (it would compute
// every 30 s instead), reads without years and months, or reads as no pause
// is refused, with the accepted forms named.
func TestTrustyAIScheduleAdmission(t *testing.T) {
	for _, version := range []string{"v1", "v1alpha1"} {
		for _, s := range []string{"PT30S", "PT5M", "PT1H30M", "P1D", "P1DT2H30M45S", "PT1.5S", "30s", "5m", "2h", "1d"} {
			out, errOut, code := renderFile(t, tasCRWith(t, version, tasPVC, "", s))
			require.Equal(t, 0, code, "%s %q: %s", version, s, errOut)
			assert.Contains(t, out, "- name: SERVICE_METRICS_SCHEDULE\n              value: \""+s+"\"\n", "%s %q", version, s)
		}
		forms := "must be an ISO-8601 duration in weeks, days, hours, minutes and seconds (PT30S, PT5M, PT1H30M, P1D, P1DT2H30M45S, PT1.5S) or a whole number with one unit s, m, h or d (30s, 5m, 2h, 1d)"
		for s, want := range map[string]string{
			"1h30m": forms, "1.5m": forms, "500ms": forms, "P1M": forms, "30x": forms, "-PT5S": forms,
			"0s": "must be at least 1 second", "PT0S": "must be at least 1 second", "PT": "must be at least 1 second",
			"P": "must be at least 1 second", "PT0.5S": "must be at least 1 second",
			"P1000000000D": "must be shorter than 1000000000 days",
		} {
			_, errOut, code := renderFile(t, tasCRWith(t, version, tasPVC, "", s))
			assert.Equal(t, 1, code, "%s %q", version, s)
			assert.Contains(t, errOut, "spec.metrics.schedule: Invalid value: \""+s+"\": "+want, "%s %q", version, s)
		}
	}
}

// PVC mode and a migration render one pod whatever spec.replicas says (one
// pod mounts the ReadWriteOnce claim, as upstream runs 1); DATABASE mode
// renders spec.replicas.
func TestTrustyAIReplicasRender(t *testing.T) {
	for _, tc := range []struct {
		name, storage, replicas, want string
	}{
		{"PVC", tasPVC, "3", "replicas: 1\n"},
		{"PVC unset", tasPVC, "", "replicas: 1\n"},
		{"migration", "{format: DATABASE, databaseConfigurations: db, folder: /inputs, size: 1Gi}", "3", "replicas: 1\n"},
		{"DATABASE", tasDatabase, "3", "replicas: 3\n"},
	} {
		for _, v := range tasVariants {
			out, errOut, code := renderFile(t, tasCRWith(t, "v1", tc.storage, tc.replicas, "5s"), v...)
			require.Equal(t, 0, code, "%s %v: %s", tc.name, v, errOut)
			found := false
			for _, doc := range guard.Documents(out) {
				if strings.Contains(doc, "kind: Deployment\n") {
					found = true
					assert.Contains(t, doc, "\nspec:\n  "+tc.want, "%s %v", tc.name, v)
				}
			}
			assert.True(t, found, "a Deployment")
		}
	}
}
