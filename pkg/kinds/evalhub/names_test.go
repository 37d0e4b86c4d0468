package evalhub

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// evalHubEveryObject switches on every object the chart renders: the MCP
// server (its Deployment, Service, ConfigMap and Route) and a copy of each
// provider and collection; the cluster's APIs add the rest (Routes,
// ServiceMonitor, cert-manager's Certificates and Issuer).
const evalHubEveryObject = `
spec:
  database: {type: sqlite}
  providers: [garak, lm-evaluation-harness]
  collections: [leaderboard-v2]
  mcp: {enabled: true}
`

// The data keys of the test's provider and collection definitions: a
// copy's key in the test says whose copy it is without reading its name.
const (
	testProviderKey   = "test-provider-id"
	testCollectionKey = "test-collection-id"
)

// evalHubNameRule is the CRD's rule on metadata.name (pkg/apis/evalhub/v1,
// XValidation): a DNS-1035 label of at most 55 characters. The test's names
// keep to it: it is the kind's tightest limit on names (the chart's values
// schema takes 63).
var evalHubNameRule = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

const evalHubMaxName = 55

// serviceOfURL is the Service an in-cluster URL of names.go names
// (https://<service>.<namespace>.svc.cluster.local:8443); the host itself
// when it is not of that form, which then matches no Service.
func serviceOfURL(u, namespace string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	return strings.TrimSuffix(parsed.Hostname(), "."+namespace+".svc.cluster.local")
}

// evalHubChartNames are the names the chart must give its objects, as the
// Go code knows them, by "Kind/role". names.go's functions where it has
// one: the ServiceAccount (the subject of the proxy's binding and of the
// grants) and the two Services (through serviceURL and mcpURL: status.url,
// status.mcp.url, SERVICE_URL, EVALHUB_BASE_URL); Status takes the
// Deployment named <name> as the server's. The rest are upstream's names
// (values.yaml, docs/trustyai.md), which names.go has no function for.
func evalHubChartNames(cr, namespace string) map[string]string {
	api, mcp := serviceOfURL(serviceURL(cr, namespace), namespace), serviceOfURL(mcpURL(cr, namespace), namespace)
	return map[string]string{
		"Deployment/api":                           cr,
		"Deployment/mcp":                           cr + "-mcp",
		"Service/api":                              api,
		"Service/mcp":                              mcp,
		"Service/metrics":                          cr + "-metrics",
		"ServiceAccount":                           serviceAccountName(cr),
		"ConfigMap/api-config":                     cr + "-config",
		"ConfigMap/mcp-config":                     cr + "-mcp-config",
		"ConfigMap/service-ca":                     cr + "-service-ca",
		"ConfigMap/provider/garak":                 cr + "-provider-garak",
		"ConfigMap/provider/lm-evaluation-harness": cr + "-provider-lm-evaluation-harness",
		"ConfigMap/collection/leaderboard-v2":      cr + "-collection-leaderboard-v2",
		"Route/api":                                cr,
		"Route/mcp":                                cr + "-mcp",
		"ServiceMonitor":                           cr + "-metrics",
		// The serving certificates, by the Service they are for.
		"Certificate/" + api: cr + "-tls",
		"Certificate/" + mcp: cr + "-mcp-tls",
		"Issuer":             cr + "-selfsigned",
	}
}

// evalHubObject is what the test reads of a rendered object.
type evalHubObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	Spec struct {
		DNSNames []string `json:"dnsNames"`
		Template struct {
			Spec struct {
				ServiceAccountName string          `json:"serviceAccountName"`
				Volumes            []corev1.Volume `json:"volumes"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// role keys an object by what it is, read from anything but its name: its
// component label, the service CA's annotation, a copy's data, the Service
// a Certificate is for.
func (o evalHubObject) role(namespace string) string {
	switch {
	case o.Kind == "ConfigMap" && o.Metadata.Annotations["service.beta.openshift.io/inject-cabundle"] == "true":
		return "ConfigMap/service-ca"
	case o.Kind == "ConfigMap" && o.Data[testProviderKey] != "":
		return "ConfigMap/provider/" + o.Data[testProviderKey]
	case o.Kind == "ConfigMap" && o.Data[testCollectionKey] != "":
		return "ConfigMap/collection/" + o.Data[testCollectionKey]
	case o.Kind == "ConfigMap":
		return "ConfigMap/" + o.Metadata.Labels["component"] + "-config"
	case o.Kind == "Deployment", o.Kind == "Service", o.Kind == "Route":
		return o.Kind + "/" + o.Metadata.Labels["component"]
	case o.Kind == "Certificate" && len(o.Spec.DNSNames) > 0:
		return "Certificate/" + strings.TrimSuffix(o.Spec.DNSNames[0], "."+namespace+".svc")
	}
	return o.Kind
}

// The names the Go code gives EvalHub's objects are the names the chart
// renders, for every object, on OpenShift, with cert-manager and on a plain
// cluster, and for names at the edges of what the CRD accepts.
func TestNamesMatchTheChart(t *testing.T) {
	c, err := charts.Load(Chart)
	require.NoError(t, err)
	const namespace = "team-a"
	names := []string{
		"hub",
		"a",
		strings.Repeat("a", evalHubMaxName), // the longest the CRD accepts
		"x-" + strings.Repeat("1", 53),      // 55, digits after the leading letter
		strings.Repeat("ab-", 18) + "z",     // 55, a dash every third character
		"e2e-hub-0",                         // ends with a digit
	}
	clusters := []struct {
		name string
		caps release.Capabilities
	}{
		// OpenShift, with cert-manager too: the service CA serves, no Certificate.
		{"openshift", release.NewCapabilities(platform.Route, platform.SCC, platform.ServiceMonitor, platform.Certificate)},
		{"cert-manager", release.NewCapabilities(platform.Certificate, platform.ServiceMonitor)},
		{"plain", release.NewCapabilities()},
	}
	for _, name := range names {
		require.Regexp(t, evalHubNameRule, name, "the CRD refuses the name")
		require.LessOrEqual(t, len(name), evalHubMaxName, "the CRD refuses the name")
		for _, cl := range clusters {
			t.Run(fmt.Sprintf("%.20s-%d-%s", name, len(name), cl.name), func(t *testing.T) {
				cr := &evalhubv1.EvalHub{}
				require.NoError(t, yaml.UnmarshalStrict([]byte(evalHubEveryObject), cr))
				cr.Name, cr.Namespace = name, namespace
				k := &Kind{Deps: release.Deps{Environ: func() []string { return nil }}}
				in, err := k.OfflineInputs(cr, cl.caps)
				require.NoError(t, err)
				// What Gather finds and OfflineInputs cannot know: the
				// definitions in the operator's namespace and, but on the
				// plain cluster (where the chart's own fallback name is
				// mounted, optional), the merged MLflow CA bundle.
				in.values.Providers = []Definition{{Name: "garak", Data: map[string]string{testProviderKey: "garak"}}, {Name: "lm-evaluation-harness", Data: map[string]string{testProviderKey: "lm-evaluation-harness"}}}
				in.values.Collections = []Definition{{Name: "leaderboard-v2", Data: map[string]string{testCollectionKey: "leaderboard-v2"}}}
				if cl.name != "plain" {
					in.values.TrustConfigMap, in.values.TrustHash = bundleName(name), "h"
				}
				vals, err := k.Values(cr, in)
				require.NoError(t, err)
				manifest, err := render.Render(c.Chart, vals, render.Options{ReleaseName: naming.ReleaseName(ReleasePrefix, namespace, name), Namespace: namespace, APIVersions: cl.caps.APIVersions()})
				require.NoError(t, err)
				objs, err := guard.Check(manifest, guard.Policy{Namespace: namespace, Kinds: c.Kinds})
				require.NoError(t, err)

				want := evalHubChartNames(name, namespace)
				got := map[string]string{}
				for _, doc := range guard.Documents(manifest) {
					var o evalHubObject
					require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
					id, n := o.role(namespace), o.Metadata.Name
					require.NotContains(t, got, id, "two objects of %s", id)
					got[id] = n
					require.Contains(t, want, id, "%s %s: the test knows no name for it", o.Kind, n)
					assert.Equal(t, want[id], n, "%s: the Go code and the chart disagree", id)

					// A name the API server takes: Services are DNS-1035
					// labels, the rest DNS subdomains. ConfigMaps and the
					// Issuer keep upstream's names, over 63 characters for
					// the longest CR names (valid: 253 is their limit);
					// everything else stays within a label's 63.
					if o.Kind == "Service" {
						assert.Empty(t, validation.IsDNS1035Label(n), id)
					} else {
						assert.Empty(t, validation.IsDNS1123Subdomain(n), id)
					}
					if o.Kind != "ConfigMap" && o.Kind != "Issuer" {
						assert.LessOrEqual(t, len(n), naming.MaxChildNameLength, id)
					}
					// The labels hold the name: valid label values.
					for l, v := range o.Metadata.Labels {
						assert.Empty(t, validation.IsValidLabelValue(v), "%s: label %s", id, l)
					}

					if o.Kind == "Deployment" {
						// The pods run as the ServiceAccount the proxy's
						// binding and the grants bind.
						assert.Equal(t, serviceAccountName(name), o.Spec.Template.Spec.ServiceAccountName, id)
					}
					if id == "Deployment/api" {
						// The server mounts the bundle Prepare writes
						// (bundleName), set or by the chart's default.
						mounted := ""
						for _, v := range o.Spec.Template.Spec.Volumes {
							if v.Name == "mlflow-ca-bundle" && v.ConfigMap != nil {
								mounted = v.ConfigMap.Name
							}
						}
						assert.Equal(t, bundleName(name), mounted, "the MLflow CA bundle the server mounts")
					}
				}
				require.Len(t, got, len(objs), "every object is checked once")

				// Exactly the objects the cluster's APIs call for.
				wantRoles := []string{
					"Deployment/api", "Deployment/mcp", "Service/api", "Service/mcp", "Service/metrics", "ServiceAccount",
					"ConfigMap/api-config", "ConfigMap/mcp-config", "ConfigMap/service-ca",
					"ConfigMap/provider/garak", "ConfigMap/provider/lm-evaluation-harness", "ConfigMap/collection/leaderboard-v2",
				}
				if cl.caps.Has(platform.Route) {
					wantRoles = append(wantRoles, "Route/api", "Route/mcp")
				}
				if cl.caps.Has(platform.ServiceMonitor) {
					wantRoles = append(wantRoles, "ServiceMonitor")
				}
				if cl.caps.Has(platform.Certificate) && !cl.caps.Has(platform.SCC) {
					wantRoles = append(wantRoles, "Certificate/"+want["Service/api"], "Certificate/"+want["Service/mcp"], "Issuer")
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
