package platform

import "k8s.io/apimachinery/pkg/runtime/schema"

// InferenceService is KServe's.
var InferenceService = schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}

// Cluster is what the kinds' translations know of the cluster they render
// for: the optional APIs it serves. A kind reads the fields it needs.
type Cluster struct {
	// Route: route.openshift.io/v1 Route is served.
	Route bool
	// ServiceMonitor and PrometheusRule: the Prometheus operator's APIs are served.
	ServiceMonitor, PrometheusRule bool
	// OpenShift: security.openshift.io/v1 SecurityContextConstraints exist.
	OpenShift bool
	// CertManager: cert-manager's Certificate is served.
	CertManager bool
	// KServe: KServe's InferenceService is served.
	KServe bool
	// Istio: the DestinationRule and VirtualService APIs (v1beta1), both.
	Istio bool
}

// Served answers whether the cluster serves an API (release.Capabilities does).
type Served interface {
	Has(schema.GroupVersionKind) bool
}

// ClusterOf is what the served APIs say of the cluster.
func ClusterOf(s Served) Cluster {
	return Cluster{
		Route: s.Has(Route), ServiceMonitor: s.Has(ServiceMonitor), PrometheusRule: s.Has(PrometheusRule),
		OpenShift: s.Has(SCC), CertManager: s.Has(Certificate), KServe: s.Has(InferenceService),
		Istio: s.Has(DestinationRule) && s.Has(VirtualService),
	}
}

// Who creates a workload's serving certificates (the charts' tls.mode).
const (
	// TLSOpenShift: OpenShift's service CA, through the Service's annotation.
	TLSOpenShift = "openshift"
	// TLSCertManager: cert-manager, through a Certificate the chart renders.
	TLSCertManager = "cert-manager"
	// TLSNone: nobody; the workload serves a self-signed certificate or plain HTTP.
	TLSNone = "none"
)

// TLSMode is who creates the serving certificates on this cluster:
// OpenShift's service CA where it runs, else cert-manager where installed,
// else nobody.
func (c Cluster) TLSMode() string {
	switch {
	case c.OpenShift:
		return TLSOpenShift
	case c.CertManager:
		return TLSCertManager
	}
	return TLSNone
}
