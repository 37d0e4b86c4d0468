package ogx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// everyObject switches on every object the chart renders.
const everyObject = `
spec:
  distribution: {name: starter}
  providers:
    inference:
      remote:
        vllm: [{id: vllm, endpoint: "http://vllm:8000/v1"}]
  workload:
    autoscaling: {maxReplicas: 3}
    podDisruptionBudget: {maxUnavailable: 1}
    storage: {size: 1Gi}
  network:
    externalAccess: {enabled: true}
`

// The names names.go gives are the names the chart renders, for every
// object, on and off OpenShift, and for names at the edges of what a CR
// name can be.
func TestNamesMatchTheChart(t *testing.T) {
	c, err := charts.Load("ogx-server")
	require.NoError(t, err)
	for _, name := range []string{"demo", strings.Repeat("a", 63), strings.Repeat("abcdefghi.", 25) + "abc", "1st-server", strings.Repeat("a-", 31)} {
		for _, caps := range []release.Capabilities{
			release.NewCapabilities(platform.ServiceMonitor, platform.PrometheusRule),
			release.NewCapabilities(platform.Route, platform.ServiceMonitor, platform.PrometheusRule, platform.SCC),
		} {
			t.Run(fmt.Sprintf("%.20s-%d", name, len(caps.APIVersions())), func(t *testing.T) {
				cr := &ogxv1beta1.OGXServer{}
				require.NoError(t, yaml.UnmarshalStrict([]byte(everyObject), cr))
				cr.Name, cr.Namespace = name, "team-a"
				k := &Kind{}
				in, err := k.OfflineInputs(cr, caps)
				require.NoError(t, err)
				in.values.Trust = mountedTrust{ConfigMapName: bundleName(name), Hash: "h"}
				in.values.AnyUID = true
				vals, err := k.Values(cr, in)
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
						assert.Equal(t, in.values.Generated.ConfigMapName, o.Metadata.Name)
						assert.LessOrEqual(t, len(o.Metadata.Name), 253)
						continue
					}
					require.NotContains(t, got, key, "two objects of %s", key)
					got[key] = o.Metadata.Name
					assert.LessOrEqual(t, len(o.Metadata.Name), naming.MaxChildNameLength, key)
				}
				require.Len(t, got, len(objs)-1, "every object but the generated ConfigMap")
				for key, name := range got {
					assert.Equal(t, want[key], name, "%s: names.go and the chart disagree", key)
				}
				if caps.Has(platform.SCC) {
					for _, key := range []string{"Route", "ConfigMap/service-ca", "ConfigMap/trusted-ca", "RoleBinding"} {
						assert.Contains(t, got, key)
					}
				} else {
					assert.Contains(t, got, "Ingress")
				}
				for _, key := range []string{"Deployment", "Service", "PersistentVolumeClaim", "ServiceAccount", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "ServiceMonitor", "PrometheusRule"} {
					assert.Contains(t, got, key, "every object is rendered")
				}
				assert.Contains(t, manifest, fmt.Sprintf("name: %q", bundleName(name)))
			})
		}
	}
}
