package nemoguardrails

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// nemoEveryObject switches on every object the chart renders: auth
// (kube-rbac-proxy's ConfigMap, the ServiceAccount, and with cert-manager
// the Certificate and Issuer); the cluster's APIs and the operator's
// ingress domain add the Route or the Ingress.
const nemoEveryObject = `
metadata:
  annotations: {security.opendatahub.io/enable-auth: "true"}
spec:
  nemoConfigs:
    - {name: safety, configMaps: [nemo-config], default: true}
`

// nemoChartNames are the names the chart must give its objects, as the Go
// code knows them, by "Kind" or, for the two ConfigMaps, "ConfigMap/<role>".
// names.go's functions where it has one: the service CA ConfigMap (which
// the trust request reads and status.ca names) and the ServiceAccount (the
// subject of the proxy's binding). The rest are upstream's names
// (values.yaml, docs/trustyai.md), which names.go has no function for.
func nemoChartNames(cr string) map[string]string {
	return map[string]string{
		"Deployment":                cr,
		"Service":                   cr,
		"Route":                     cr,
		"Ingress":                   cr,
		"ConfigMap/service-ca":      serviceCAName(cr),
		"ConfigMap/kube-rbac-proxy": cr + "-rbac-proxy-config",
		"ServiceAccount":            serviceAccountName(cr),
		"Certificate":               cr + "-tls",
		"Issuer":                    cr + "-selfsigned",
	}
}

// nemoRendered is what the test reads of a rendered object.
type nemoRendered struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				ServiceAccountName string          `json:"serviceAccountName"`
				Volumes            []corev1.Volume `json:"volumes"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// role keys an object by what it is, read from anything but its name.
func (o nemoRendered) role() string {
	switch {
	case o.Kind != "ConfigMap":
		return o.Kind
	case o.Metadata.Annotations["service.beta.openshift.io/inject-cabundle"] == "true":
		return "ConfigMap/service-ca"
	case o.Metadata.Labels["app.kubernetes.io/component"] == "kube-rbac-proxy":
		return "ConfigMap/kube-rbac-proxy"
	}
	return "ConfigMap/unknown"
}

// The names the Go code gives NemoGuardrails' objects are the names the
// chart renders, for every object, on OpenShift, with cert-manager and on a
// plain cluster, and for names at the edges of what the kind takes (DNS-1035
// labels: the Service is named after the CR); a name the API server takes
// but a Service does not is refused on metadata.name.
func TestNamesMatchTheChart(t *testing.T) {
	c, err := charts.Load(Chart)
	require.NoError(t, err)
	const namespace, settingsMap = "team-a", "ai-stack-operator-settings"
	names := []string{
		"g",
		"test-nemoguardrails",
		strings.Repeat("a", 63), // the longest a Service takes
		"guard-1",
		strings.Repeat("ab-", 20) + "abc", // 63 characters with dashes
	}
	clusters := []struct {
		name string
		caps release.Capabilities
	}{
		// OpenShift, with cert-manager too: the service CA serves, no Certificate.
		{"openshift", release.NewCapabilities(platform.Route, platform.SCC, platform.Certificate)},
		{"cert-manager", release.NewCapabilities(platform.Certificate)},
		{"plain", release.NewCapabilities()},
	}
	// Names the API server takes for a custom resource (DNS subdomains)
	// but not for the Service named after the CR (a DNS-1035 label): the CR
	// gets an InvalidSpec on metadata.name, and nothing is rendered.
	for _, name := range []string{"1st-guard", "my.guard", strings.Repeat("abcdefghi.", 6) + "abc", strings.Repeat("a", 64), strings.Repeat("abcdefghi.", 25) + "abc"} {
		require.Empty(t, validation.IsDNS1123Subdomain(name), "the API server takes the name")
		g := &nemov1alpha1.NemoGuardrails{}
		require.NoError(t, yaml.UnmarshalStrict([]byte(nemoEveryObject), g))
		g.Name, g.Namespace = name, namespace
		k := &Kind{Deps: release.Deps{Environ: func() []string { return nil }}}
		in, err := k.OfflineInputs(g, release.NewCapabilities())
		require.NoError(t, err)
		_, err = k.Values(g, in)
		var f *status.Failure
		if assert.ErrorAs(t, err, &f, "%q", name) {
			assert.Equal(t, "metadata.name", f.Field)
			assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
			assert.Contains(t, f.Message, "Service")
		}
	}
	for _, name := range names {
		require.Empty(t, validation.IsDNS1123Subdomain(name), "the API server refuses the name")
		require.LessOrEqual(t, len(name), naming.MaxChildNameLength, "the chart refuses the name")
		for _, cl := range clusters {
			t.Run(fmt.Sprintf("%.20s-%d-%s", name, len(name), cl.name), func(t *testing.T) {
				g := &nemov1alpha1.NemoGuardrails{}
				require.NoError(t, yaml.UnmarshalStrict([]byte(nemoEveryObject), g))
				g.Name, g.Namespace = name, namespace
				require.True(t, authRequired(g))
				// The operator's settings, as render --settings gives them:
				// the ingress domain, for an Ingress where there is no Route.
				k := &Kind{Deps: release.Deps{
					OperatorNamespace: "ops", SettingsConfigMap: settingsMap, Environ: func() []string { return nil },
					OfflineConfigMaps: map[string]map[string]string{settingsMap: {trustyaifamily.KeyIngressDomain: "apps.example.com"}},
				}}
				in, err := k.OfflineInputs(g, cl.caps)
				require.NoError(t, err)
				// What Gather writes and OfflineInputs cannot know: the
				// merged CA bundle the pods mount.
				in.values.TrustConfigMap, in.values.TrustHash = bundleName(name), "h"
				vals, err := k.Values(g, in)
				require.NoError(t, err)
				manifest, err := render.Render(c.Chart, vals, render.Options{ReleaseName: naming.ReleaseName(ReleasePrefix, namespace, name), Namespace: namespace, APIVersions: cl.caps.APIVersions()})
				require.NoError(t, err)
				objs, err := guard.Check(manifest, guard.Policy{Namespace: namespace, Kinds: c.Kinds})
				require.NoError(t, err)

				want := nemoChartNames(name)
				got := map[string]string{}
				for _, doc := range guard.Documents(manifest) {
					var o nemoRendered
					require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
					id, n := o.role(), o.Metadata.Name
					require.NotContains(t, got, id, "two objects of %s", id)
					got[id] = n
					require.Contains(t, want, id, "%s %s: the test knows no name for it", o.Kind, n)
					assert.Equal(t, want[id], n, "%s: the Go code and the chart disagree", id)

					// A name the API server takes: a Service's is a DNS-1035
					// label, the others DNS subdomains. The objects named
					// <name> stay within a label's 63 characters; the others
					// keep upstream's suffixes, over 63 for the longest CR
					// names (valid: 253 is their limit). The labels hold the
					// name: valid label values.
					switch {
					case o.Kind == "Service":
						assert.Empty(t, validation.IsDNS1035Label(n), id)
					default:
						assert.Empty(t, validation.IsDNS1123Subdomain(n), id)
					}
					if n == name {
						assert.LessOrEqual(t, len(n), naming.MaxChildNameLength, id)
					}
					for l, v := range o.Metadata.Labels {
						assert.Empty(t, validation.IsValidLabelValue(v), "%s: label %s", id, l)
					}

					if o.Kind == "Deployment" {
						// The pods run as the ServiceAccount the proxy's
						// binding binds, and mount the bundle Prepare writes.
						assert.Equal(t, serviceAccountName(name), o.Spec.Template.Spec.ServiceAccountName)
						mounted := ""
						for _, v := range o.Spec.Template.Spec.Volumes {
							if v.Name == "ca-bundle" && v.ConfigMap != nil {
								mounted = v.ConfigMap.Name
							}
						}
						assert.Equal(t, bundleName(name), mounted, "the CA bundle the pods mount")
					}
				}
				require.Len(t, got, len(objs), "every object is checked once")

				// Exactly the objects the cluster's APIs call for.
				wantRoles := []string{"Deployment", "Service", "ConfigMap/service-ca", "ConfigMap/kube-rbac-proxy", "ServiceAccount"}
				if cl.caps.Has(platform.Route) {
					wantRoles = append(wantRoles, "Route")
				} else {
					wantRoles = append(wantRoles, "Ingress")
				}
				if cl.caps.Has(platform.Certificate) && !cl.caps.Has(platform.SCC) {
					wantRoles = append(wantRoles, "Certificate", "Issuer")
				}
				gotRoles := make([]string, 0, len(got))
				for id := range got {
					gotRoles = append(gotRoles, id)
				}
				assert.ElementsMatch(t, wantRoles, gotRoles, "the rendered objects")
			})
		}
	}
}
