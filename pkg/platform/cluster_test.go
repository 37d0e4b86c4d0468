package platform

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type served map[schema.GroupVersionKind]bool

func (s served) Has(gvk schema.GroupVersionKind) bool { return s[gvk] }

// The cluster is what the served APIs say, and its TLS mode prefers
// OpenShift's service CA, then cert-manager.
func TestClusterAndItsTLSMode(t *testing.T) {
	assert.Equal(t, Cluster{}, ClusterOf(served{}))
	assert.Equal(t, Cluster{Route: true, OpenShift: true, KServe: true}, ClusterOf(served{Route: true, SCC: true, InferenceService: true}))
	assert.False(t, ClusterOf(served{DestinationRule: true}).Istio, "Istio needs both APIs")
	assert.True(t, ClusterOf(served{DestinationRule: true, VirtualService: true}).Istio)
	assert.Equal(t, Cluster{ServiceMonitor: true, PrometheusRule: true, CertManager: true}, ClusterOf(served{ServiceMonitor: true, PrometheusRule: true, Certificate: true}))

	for c, want := range map[Cluster]string{
		{}:                                   TLSNone,
		{CertManager: true}:                  TLSCertManager,
		{OpenShift: true}:                    TLSOpenShift,
		{OpenShift: true, CertManager: true}: TLSOpenShift,
	} {
		assert.Equal(t, want, c.TLSMode(), "%+v", c)
	}
}
