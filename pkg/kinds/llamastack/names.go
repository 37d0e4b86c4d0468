package llamastack

import "github.com/ai-stack-operator/ai-stack-operator/pkg/naming"

// ReleasePrefix starts every LlamaStackDistribution release name; changing
// it orphans every release that exists.
const ReleasePrefix = "llsd"

// Chart is the embedded chart that renders the kind (charts/llama-stack-distribution).
const Chart = "llama-stack-distribution"

// The names of every object the operator creates for a CR, in one place.
// The chart's _helpers.tpl computes the same for the objects it renders
// (TestNamesMatchTheChart renders it and compares, for long, dotted and
// digit-led names); the CA bundle is written by the Go code only.
func deploymentName(cr string) string     { return naming.ChildName(cr, "") }
func serviceName(cr string) string        { return naming.ServiceName(cr, "-service") }
func claimName(cr string) string          { return naming.ChildName(cr, "-pvc") }
func runConfigName(cr string) string      { return naming.ChildName(cr, "-config") }
func serviceAccountName(cr string) string { return naming.ChildName(cr, "-sa") }
func bundleName(cr string) string         { return naming.ChildName(cr, "-ca-bundle") }
func serviceCAName(cr string) string      { return naming.ChildName(cr, "-service-ca") }
func trustedCAName(cr string) string      { return naming.ChildName(cr, "-trusted-ca") }

// chartNames are the names the chart gives its objects, by "Kind" or, for
// the two injected trust ConfigMaps, by "ConfigMap/<component>".
func chartNames(cr string) map[string]string {
	return map[string]string{
		"Deployment":              deploymentName(cr),
		"Service":                 serviceName(cr),
		"PersistentVolumeClaim":   claimName(cr),
		"ConfigMap/run-config":    runConfigName(cr),
		"ServiceAccount":          serviceAccountName(cr),
		"ConfigMap/service-ca":    serviceCAName(cr),
		"ConfigMap/trusted-ca":    trustedCAName(cr),
		"HorizontalPodAutoscaler": naming.ChildName(cr, "-hpa"),
		"Ingress":                 naming.ChildName(cr, "-ingress"),
		"NetworkPolicy":           naming.ChildName(cr, "-network-policy"),
		"PodDisruptionBudget":     naming.ChildName(cr, "-pdb"),
		"Route":                   naming.ChildName(cr, "-route"),
		"RoleBinding":             naming.ChildName(cr, "-rb"),
		"ServiceMonitor":          naming.ChildName(cr, "-monitor"),
	}
}
