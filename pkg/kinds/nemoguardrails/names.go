package nemoguardrails

// ReleasePrefix starts the names of NemoGuardrails' Helm releases.
const ReleasePrefix = "nemo"

// Chart is the embedded chart that renders the kind (charts/nemo-guardrails).
const Chart = "nemo-guardrails"

// Names of the objects of a CR, as upstream names them (the chart renders
// the namespaced ones).
func serviceAccountName(cr string) string { return cr + "-serviceaccount" }

// serviceCAName is upstream's <name>-ca-bundle, into which OpenShift injects
// the service CA.
func serviceCAName(cr string) string { return cr + "-ca-bundle" }

// bundleName is the merged CA bundle the pods mount (the operator's: upstream
// concatenates the sources in an init container instead).
func bundleName(cr string) string { return cr + "-merged-ca-bundle" }

// bindingName is the ClusterRoleBinding of the proxy's ServiceAccount. Not
// upstream's "<name>-<namespace>-auth-delegator": that one is ambiguous
// ("a-b" in "c" and "a" in "b-c" share it), which would let a tenant block
// another namespace's server. Namespaces and these CR names hold no dots.
func bindingName(cr, namespace string) string {
	return "nemoguardrails-proxy." + namespace + "." + cr
}

// ingressHost is the host of the CR's Ingress under the operator's
// trustyai-ingress-domain, as TrustyAIServices get theirs.
func ingressHost(cr, namespace, domain string) string { return cr + "." + namespace + "." + domain }
