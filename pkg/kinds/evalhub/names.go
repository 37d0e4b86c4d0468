package evalhub

import "fmt"

// ReleasePrefix starts the names of EvalHub's Helm releases.
const ReleasePrefix = "evalhub"

// Chart is the embedded chart that renders the kind (charts/eval-hub).
const Chart = "eval-hub"

// Names of the objects of a CR, as upstream names them (the chart renders
// the namespaced ones).
func serviceAccountName(cr string) string { return cr + "-service" }

// bundleName is upstream's merged MLflow CA bundle, written here by pkg/trust.
func bundleName(cr string) string { return cr + "-mlflow-ca-bundle" }

// serviceURL is the server's in-cluster URL: upstream's status.url and
// SERVICE_URL.
func serviceURL(cr, namespace string) string {
	return fmt.Sprintf("https://%s.%s.svc.cluster.local:8443", cr, namespace)
}

// mcpURL is the MCP server's in-cluster URL (upstream's status.mcp.url).
func mcpURL(cr, namespace string) string {
	return fmt.Sprintf("https://%s-mcp.%s.svc.cluster.local:8443", cr, namespace)
}

// bindingName is the ClusterRoleBinding of the proxy's ServiceAccount (not
// upstream's "<name>-<namespace>-auth-reviewer-crb", which is ambiguous
// across namespaces: "a-b" in "c" and "a" in "b-c" share it).
func bindingName(cr, namespace string) string {
	return "evalhub-proxy." + namespace + "." + cr
}
