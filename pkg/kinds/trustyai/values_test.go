package trustyai

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// rendered is what a render of the chart for a CR holds, by kind.
type rendered struct {
	kinds      map[string]int
	deployment *appsv1.Deployment
	ingress    *networkingv1.Ingress
	services   []corev1.Service
}

// renderValues renders the chart as the operator does (Values, the chart,
// the guard) with the given inputs.
func renderValues(t *testing.T, cr *trustyv1.TrustyAIService, in *Inputs) rendered {
	t.Helper()
	c, err := charts.Load("trustyai-service")
	require.NoError(t, err)
	vals, err := (&Kind{}).Values(cr, in)
	require.NoError(t, err)
	caps := release.NewCapabilities()
	if in.values.Platform.Route {
		caps = release.NewCapabilities(platform.Route)
	}
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: naming.ReleaseName(ReleasePrefix, cr.Namespace, cr.Name), Namespace: cr.Namespace, APIVersions: caps.APIVersions()})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: cr.Namespace, Kinds: c.Kinds})
	require.NoError(t, err)
	r := rendered{kinds: map[string]int{}}
	for _, doc := range guard.Documents(out) {
		var head struct {
			Kind string `json:"kind"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head))
		r.kinds[head.Kind]++
		switch head.Kind {
		case "Deployment":
			r.deployment = &appsv1.Deployment{}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), r.deployment))
		case "Ingress":
			r.ingress = &networkingv1.Ingress{}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), r.ingress))
		case "Service":
			var s corev1.Service
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &s))
			r.services = append(r.services, s)
		}
	}
	require.NotNil(t, r.deployment)
	return r
}

// Finding 7: off OpenShift, no Ingress unless the administrator gives a
// domain; with one, each service has a host of its own (the catch-all host
// was every tenant's) and TLS at the ingress controller.
func TestIngressOnlyWithADomain(t *testing.T) {
	cr := sample(t, nil)
	offline := inputs(defaults, release.NewCapabilities(platform.Certificate))
	r := renderValues(t, cr, offline)
	assert.Zero(t, r.kinds["Ingress"], "no domain: nothing exposed")
	assert.Zero(t, r.kinds["Route"])

	s := defaults
	s.IngressDomain, s.IngressClass = "apps.example.com", "nginx-internal"
	r = renderValues(t, cr, inputs(s, release.NewCapabilities(platform.Certificate)))
	require.NotNil(t, r.ingress)
	host := "trustyaiservice-sample.team-a.apps.example.com"
	assert.Equal(t, ptr.To("nginx-internal"), r.ingress.Spec.IngressClassName)
	require.Len(t, r.ingress.Spec.Rules, 1)
	assert.Equal(t, host, r.ingress.Spec.Rules[0].Host, "never the catch-all host")
	assert.Equal(t, "trustyaiservice-sample-tls", r.ingress.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	assert.Equal(t, []networkingv1.IngressTLS{{Hosts: []string{host}}}, r.ingress.Spec.TLS)

	s.IngressClass = ""
	r = renderValues(t, cr, inputs(s, release.NewCapabilities(platform.Certificate)))
	require.NotNil(t, r.ingress)
	assert.Nil(t, r.ingress.Spec.IngressClassName, "the cluster's default class")

	r = renderValues(t, cr, inputs(s, release.NewCapabilities(platform.Route, platform.SCC)))
	assert.Zero(t, r.kinds["Ingress"], "a Route where the Route API exists, as upstream")
	assert.Equal(t, 1, r.kinds["Route"])
}

// Finding 8: every admitted batch size reaches the service as it is; the
// JSON round trip of Helm's values made 2^63-1 into -2^63.
func TestBatchSizeRendersExactly(t *testing.T) {
	for _, n := range []int{1, 5000, 1<<53 + 1, math.MaxInt32 + 1, math.MaxInt64} {
		cr := sample(t, func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.BatchSize = ptr.To(n) })
		r := renderValues(t, cr, inputs(defaults, release.NewCapabilities()))
		assert.Equal(t, strconv.Itoa(n), env(r.deployment, "trustyai-service", "SERVICE_BATCH_SIZE"), "batchSize %d", n)
	}
	r := renderValues(t, sample(t, func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.BatchSize = nil }), inputs(defaults, release.NewCapabilities()))
	assert.Equal(t, "5000", env(r.deployment, "trustyai-service", "SERVICE_BATCH_SIZE"), "upstream's default")
}

func env(d *appsv1.Deployment, container, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// Finding 8: a storage folder on, in or over another mount path of the
// container is refused, naming the field and the path (the API server
// refuses a duplicate mountPath; a nested one hides a volume or cannot be
// made in a read-only one). Refused on every platform alike.
func TestFolderCollidingWithAMountIsRefused(t *testing.T) {
	refused := map[string]string{
		"/etc/tls/internal":            "/etc/tls/internal",
		"/etc/tls/internal/":           "/etc/tls/internal",
		"/etc/tls/internal/data":       "/etc/tls/internal",
		"/etc/tls/x/../internal":       "/etc/tls/internal",
		"/etc/tls":                     "/etc/tls/internal",
		"/etc":                         "/etc/tls/internal",
		"/":                            "/etc/tls/internal",
		"//":                           "/etc/tls/internal",
		"/etc/tls/db":                  "/etc/tls/db",
		"/etc//tls/./db/":              "/etc/tls/db",
		"/etc/pki/ai-stack-operator/":  "/etc/pki/ai-stack-operator",
		"/etc/pki/ai-stack-operator":   "/etc/pki/ai-stack-operator",
		"/etc/pki":                     "/etc/pki/ai-stack-operator",
		"/etc/pki/ai-stack-operator/x": "/etc/pki/ai-stack-operator",
	}
	for _, platform := range []release.Capabilities{release.NewCapabilities(), release.NewCapabilities(platform.SCC, platform.Route)} {
		in := inputs(defaults, platform).values
		for folder, collides := range refused {
			for _, mode := range []string{"PVC", "migration"} {
				cr := sample(t, func(cr *trustyv1.TrustyAIService) {
					cr.Spec.Storage.Folder = folder
					if mode == "migration" {
						cr.Spec.Storage.Format, cr.Spec.Storage.DatabaseConfigurations = trustyv1.StorageDatabase, "db"
					}
				})
				_, err := translate(cr, in)
				var f *status.Failure
				require.ErrorAs(t, err, &f, "%s %s", mode, folder)
				assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
				assert.Equal(t, "spec.storage.folder", f.Field)
				assert.Contains(t, f.Message, fmt.Sprintf("%q collides with %s", folder, collides))
			}
		}
	}

	// Next to the mounts, not in them: accepted, and every mount path of the
	// container is apart from every other, with every mount on.
	for _, folder := range []string{"/inputs", "/etc/tls/internal2", "/etc/tlsdata", "/etc/pki-data", "/etc/tls-db", "/data/etc/tls/internal"} {
		for _, platform := range []release.Capabilities{release.NewCapabilities(), release.NewCapabilities(platform.Certificate), release.NewCapabilities(platform.SCC, platform.Route)} {
			cr := sample(t, func(cr *trustyv1.TrustyAIService) {
				cr.Spec.Storage = trustyv1.StorageSpec{Format: trustyv1.StorageDatabase, Folder: folder, Size: "1Gi"}
			})
			in := inputs(defaults, platform)
			in.values.DatabaseCA, in.values.TrustConfigMap, in.values.TrustHash = true, bundleName(cr.Name), "h"
			r := renderValues(t, cr, in)
			for _, c := range r.deployment.Spec.Template.Spec.Containers {
				var paths []string
				for _, m := range c.VolumeMounts {
					p := path.Clean(m.MountPath)
					for _, other := range paths {
						assert.False(t, nested(p, other), "%s: container %s mounts %s and %s", folder, c.Name, p, other)
					}
					paths = append(paths, p)
				}
				if c.Name == "trustyai-service" {
					assert.Contains(t, paths, folder, "the data is mounted (migration)")
				}
			}
		}
	}
}

// Finding 8: names of up to 59 characters (the CRD's limit) render objects
// the API server accepts, on every platform and with every mount: volume
// names are fixed, never derived from the CR's name.
func TestLongNamesRenderValidObjects(t *testing.T) {
	for _, name := range []string{strings.Repeat("t", 54), strings.Repeat("t", 55), strings.Repeat("t", 59), "a-" + strings.Repeat("9", 57)} {
		for _, platform := range []release.Capabilities{release.NewCapabilities(), release.NewCapabilities(platform.Certificate), release.NewCapabilities(platform.SCC, platform.Route)} {
			for _, format := range []string{trustyv1.StoragePVC, trustyv1.StorageDatabase} {
				cr := sample(t, func(cr *trustyv1.TrustyAIService) {
					cr.Name, cr.Namespace = name, strings.Repeat("n", 63)
					cr.Spec.Storage.Format = format
				})
				s := defaults
				s.IngressDomain = longestDomain
				in := inputs(s, platform)
				in.values.DatabaseCA, in.values.TrustConfigMap, in.values.TrustHash = true, bundleName(name), "h"
				r := renderValues(t, cr, in)
				spec := r.deployment.Spec.Template.Spec
				volumes := map[string]bool{}
				for _, v := range spec.Volumes {
					assert.Empty(t, validation.IsDNS1123Label(v.Name), "volume %q", v.Name)
					volumes[v.Name] = true
				}
				for _, c := range spec.Containers {
					for _, m := range c.VolumeMounts {
						assert.True(t, volumes[m.Name], "mount of volume %q, which is not there", m.Name)
					}
				}
				for _, svc := range r.services {
					assert.Empty(t, validation.IsDNS1035Label(svc.Name), "Service %q", svc.Name)
				}
				if r.ingress != nil {
					host := r.ingress.Spec.Rules[0].Host
					assert.Empty(t, validation.IsDNS1123Subdomain(host), host)
					for _, label := range strings.Split(host, ".") {
						assert.LessOrEqual(t, len(label), validation.DNS1123LabelMaxLength, host)
					}
				}
			}
		}
	}
}

// The chart on its own (helm template) renders a batch size exactly or
// refuses it: a number beyond 2^53 is not exact in Helm's values, a string
// of digits is.
func TestChartBatchSizeExactOrRefused(t *testing.T) {
	c, err := charts.Load("trustyai-service")
	require.NoError(t, err)
	renderBatch := func(b any) (string, error) {
		return render.Render(c.Chart, map[string]any{"metrics": map[string]any{"schedule": "5s", "batchSize": b}}, render.Options{ReleaseName: "x", Namespace: "default"})
	}
	for b, want := range map[any]string{float64(5000): "5000", int64(1<<53 - 1): "9007199254740991", "9223372036854775807": "9223372036854775807"} {
		out, err := renderBatch(b)
		require.NoError(t, err, "%v", b)
		assert.Contains(t, out, "- name: SERVICE_BATCH_SIZE\n              value: \""+want+"\"\n")
	}
	for _, b := range []any{float64(1<<53 + 2), "0", "-1", "0x10", "5000 ", "1e3", ""} {
		_, err := renderBatch(b)
		require.Error(t, err, "%v", b)
		assert.Contains(t, err.Error(), "schema", "%v", b)
	}
	_, err = render.Render(c.Chart, map[string]any{"ingress": map[string]any{"host": "https://x"}}, render.Options{ReleaseName: "x", Namespace: "default"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema")
}
