package ogx

import "github.com/ai-stack-operator/ai-stack-operator/pkg/naming"

// ReleasePrefix starts every OGXServer release name; changing it orphans
// every release that exists.
const ReleasePrefix = "ogx"

// Chart is the embedded chart that renders the kind (charts/ogx-server).
const Chart = "ogx-server"

// The names of the objects the operator creates for a CR, in one place.
// The chart's _helpers.tpl computes the same for the objects it renders
// (TestNamesMatchTheChart); the CA bundle is written by the Go code only.
func deploymentName(cr string) string { return naming.ChildName(cr, "") }
func serviceName(cr string) string    { return naming.ServiceName(cr, "-service") }
func claimName(cr string) string      { return naming.ChildName(cr, "-pvc") }
func bundleName(cr string) string     { return naming.ChildName(cr, "-ca-bundle") }
func serviceCAName(cr string) string  { return naming.ChildName(cr, "-service-ca") }
func trustedCAName(cr string) string  { return naming.ChildName(cr, "-trusted-ca") }

// chartNames are the names the chart gives its objects, by "Kind" or, for
// the two injected trust ConfigMaps, by "ConfigMap/<component>".
func chartNames(cr string) map[string]string {
	return map[string]string{
		"Deployment":              deploymentName(cr),
		"Service":                 serviceName(cr),
		"PersistentVolumeClaim":   claimName(cr),
		"ServiceAccount":          naming.ChildName(cr, "-sa"),
		"ConfigMap/service-ca":    serviceCAName(cr),
		"ConfigMap/trusted-ca":    trustedCAName(cr),
		"HorizontalPodAutoscaler": naming.ChildName(cr, "-hpa"),
		"Ingress":                 naming.ChildName(cr, "-ingress"),
		"NetworkPolicy":           naming.ChildName(cr, "-network-policy"),
		"PodDisruptionBudget":     naming.ChildName(cr, "-pdb"),
		"Route":                   naming.ChildName(cr, "-route"),
		"RoleBinding":             naming.ChildName(cr, "-rb"),
		"ServiceMonitor":          naming.ChildName(cr, "-service-monitor"),
		"PrometheusRule":          naming.ChildName(cr, "-prometheus-rules"),
	}
}
