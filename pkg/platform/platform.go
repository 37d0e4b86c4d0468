// Package platform names the optional APIs the kinds' charts render into or
// detect: the kinds list the ones they use in their Meta.OptionalAPIs, and
// the operator detects them through discovery.
package platform

import "k8s.io/apimachinery/pkg/runtime/schema"

var (
	// Route is OpenShift's Route (a Route API can be installed anywhere).
	Route = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}
	// ServiceMonitor is the Prometheus operator's.
	ServiceMonitor = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	// PrometheusRule is the Prometheus operator's.
	PrometheusRule = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}
	// SCC marks OpenShift: SecurityContextConstraints exist on every
	// OpenShift cluster and nowhere else.
	SCC = schema.GroupVersionKind{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints"}
	// Certificate is cert-manager's.
	Certificate = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	// DestinationRule and VirtualService are Istio's, in the version
	// upstream's TrustyAI operator creates (v1beta1, which Istio still serves
	// beside v1).
	DestinationRule = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1beta1", Kind: "DestinationRule"}
	VirtualService  = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1beta1", Kind: "VirtualService"}
)
