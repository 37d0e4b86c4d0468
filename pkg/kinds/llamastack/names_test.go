package llamastack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// everyObject switches on every object the chart renders.
const everyObject = `
spec:
  server:
    distribution: {name: starter}
    autoscaling: {maxReplicas: 3}
    podDisruptionBudget: {maxUnavailable: 1}
    storage: {size: 1Gi}
    config:
      providers:
        inference:
          - {providerId: ollama, providerType: "remote::ollama", config: {url: "http://ollama:11434"}}
      models:
        - {modelId: "llama3.2:1b", providerId: ollama}
  network:
    exposeRoute: true
`

// The names names.go gives are the names the chart renders, for every
// object, on and off OpenShift, and for names at the edges of what a CR
// name can be.
func TestNamesMatchTheChart(t *testing.T) {
	c, err := charts.Load("llama-stack-distribution")
	require.NoError(t, err)
	names := []string{
		"demo",
		strings.Repeat("a", 63),
		strings.Repeat("abcdefghi.", 25) + "abc", // 253 characters with dots
		"1st-server",
		strings.Repeat("a-", 31), // 62 characters, ends with a dash before the cut
	}
	for _, name := range names {
		for _, caps := range []release.Capabilities{
			release.NewCapabilities(platform.ServiceMonitor),
			release.NewCapabilities(platform.Route, platform.ServiceMonitor, platform.SCC),
		} {
			t.Run(fmt.Sprintf("%.20s-%d", name, len(caps.APIVersions())), func(t *testing.T) {
				cr := &llamav1alpha1.LlamaStackDistribution{}
				require.NoError(t, yaml.UnmarshalStrict([]byte(everyObject), cr))
				cr.Name, cr.Namespace = name, "team-a"
				in := (&Kind{}).inputs(cr, Settings{Distributions: distributions.Default(), NetworkPolicy: true}, caps)
				in.values.Trust = mountedTrust{ConfigMapName: bundleName(name), Hash: "h"}
				vals, err := (&Kind{}).Values(cr, in)
				require.NoError(t, err)
				manifest, err := render.Render(c.Chart, vals, render.Options{ReleaseName: naming.ReleaseName(ReleasePrefix, cr.Namespace, name), Namespace: cr.Namespace, APIVersions: caps.APIVersions()})
				require.NoError(t, err)
				objs, err := guard.Check(manifest, guard.Policy{Namespace: cr.Namespace, Kinds: c.Kinds})
				require.NoError(t, err)

				want := chartNames(name)
				got := map[string]string{}
				for _, doc := range guard.Documents(manifest) {
					var o struct {
						Kind     string `json:"kind"`
						Metadata struct {
							Name        string            `json:"name"`
							Labels      map[string]string `json:"labels"`
							Annotations map[string]string `json:"annotations"`
						} `json:"metadata"`
					}
					require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
					key := o.Kind
					switch {
					case o.Kind != "ConfigMap":
					case o.Metadata.Annotations["service.beta.openshift.io/inject-cabundle"] == "true":
						key = "ConfigMap/service-ca"
					case o.Metadata.Labels["config.openshift.io/inject-trusted-cabundle"] == "true":
						key = "ConfigMap/trusted-ca"
					default:
						key = "ConfigMap/run-config"
					}
					require.NotContains(t, got, key, "two objects of %s", key)
					got[key] = o.Metadata.Name
					assert.LessOrEqual(t, len(o.Metadata.Name), naming.MaxChildNameLength, key)
				}
				require.Len(t, got, len(objs))
				for key, name := range got {
					assert.Equal(t, want[key], name, "%s: names.go and the chart disagree", key)
				}
				if caps.Has(platform.SCC) {
					assert.Contains(t, got, "Route")
					assert.Contains(t, got, "ConfigMap/service-ca")
					assert.Contains(t, got, "ConfigMap/trusted-ca")
				} else {
					assert.Contains(t, got, "Ingress")
				}
				for _, key := range []string{"Deployment", "Service", "PersistentVolumeClaim", "ConfigMap/run-config", "ServiceAccount", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "ServiceMonitor"} {
					assert.Contains(t, got, key, "every object is rendered")
				}
				// The Deployment mounts the bundle of the name the Go code writes.
				assert.Contains(t, manifest, fmt.Sprintf("name: %q", bundleName(name)))
			})
		}
	}
}
