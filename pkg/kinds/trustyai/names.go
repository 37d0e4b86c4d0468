package trustyai

import "github.com/ai-stack-operator/ai-stack-operator/pkg/naming"

// ReleasePrefix starts every TrustyAIService release name; changing it
// orphans every release that exists.
const ReleasePrefix = "tas"

// Chart is the embedded chart that renders the kind (charts/trustyai-service).
const Chart = "trustyai-service"

// The names of every object the operator creates for a CR, in one place:
// upstream's names (its smoke tests and clients look them up). The chart's
// templates give the same (TestNamesMatchTheChart renders it and compares);
// the CA bundle and the proxy's ClusterRoleBinding are written by the Go
// code only. The CRD limits CR names to DNS-1035 labels of 59 characters,
// so every name here is valid as it is.
func deploymentName(cr string) string       { return cr }
func serviceName(cr string) string          { return cr }
func tlsServiceName(cr string) string       { return cr + "-tls" }
func claimName(cr string) string            { return cr + "-pvc" }
func serviceAccountName(cr string) string   { return cr + "-proxy" }
func proxyConfigName(cr string) string      { return cr + "-kube-rbac-proxy-config" }
func tlsSecretName(cr string) string        { return cr + "-tls" }
func internalSecretName(cr string) string   { return cr + "-internal" }
func dbCredentialsName(cr string) string    { return cr + "-db-credentials" }
func dbCAName(cr string) string             { return cr + "-db-ca" }
func bundleName(cr string) string           { return cr + "-ca-bundle" }
func serviceCAName(cr string) string        { return cr + "-service-ca" }
func trustedCAName(cr string) string        { return cr + "-trusted-ca" }
func selfSignedIssuerName(cr string) string { return cr + "-selfsigned" }
func destinationRuleName(cr string) string  { return cr + "-internal" }
func virtualServiceName(cr string) string   { return cr + "-redirect" }

// proxyBindingName is the cluster-wide ClusterRoleBinding of the CR's proxy
// ServiceAccount. Not upstream's "<name>-<namespace>-proxy-rolebinding":
// that one is ambiguous ("a-b" in "c" and "a" in "b-c" share it), which
// would let a tenant block another namespace's service. Namespaces and
// these CR names hold no dots, so this one is unique.
func proxyBindingName(cr, namespace string) string { return "trustyai-proxy." + namespace + "." + cr }

// ingressHost is the host of the CR's Ingress under the operator's
// trustyai-ingress-domain: "<name>.<namespace>.<domain>". Not OpenShift's
// "<name>-<namespace>" form: that one is ambiguous ("a-b" in "c" and "a" in
// "b-c" share it), which would let a tenant who names a namespace to suit
// claim another namespace's host, and the bearer tokens sent to it. Each
// label here is the CR's name (at most 59 characters) or its namespace (63),
// and the domain is short enough (trustyaifamily.MaxIngressDomainLength) for the whole.
func ingressHost(cr, namespace, domain string) string { return cr + "." + namespace + "." + domain }

// modelMeshVolumeName is the volume through which ModelMesh's mm container
// mounts Secret <name>-internal. Volume names are DNS labels of 63
// characters: <name>-internal for CR names of up to 54, the name cut and
// hashed within 63 for longer ones (naming.ChildName).
func modelMeshVolumeName(cr string) string { return naming.ChildName(cr, "-internal") }

// chartNames are the names the chart gives its objects, by "Kind" or, where
// a kind has several, "Kind/<what>".
func chartNames(cr string) map[string]string {
	return map[string]string{
		"Deployment":                            deploymentName(cr),
		"Service/internal":                      serviceName(cr),
		"Service/tls":                           tlsServiceName(cr),
		"PersistentVolumeClaim":                 claimName(cr),
		"ServiceAccount":                        serviceAccountName(cr),
		"ConfigMap/kube-rbac-proxy":             proxyConfigName(cr),
		"ConfigMap/service-ca":                  serviceCAName(cr),
		"ConfigMap/trusted-ca":                  trustedCAName(cr),
		"Route":                                 cr,
		"Ingress":                               cr,
		"ServiceMonitor":                        cr,
		"Issuer":                                selfSignedIssuerName(cr),
		"DestinationRule":                       destinationRuleName(cr),
		"VirtualService":                        virtualServiceName(cr),
		"Certificate/" + tlsSecretName(cr):      tlsSecretName(cr),
		"Certificate/" + internalSecretName(cr): internalSecretName(cr),
	}
}

// AnnotationDBMigration is upstream's request to roll the Deployment out for
// a migration (trustyai.opendatahub.io/db-migration), which upstream removes
// once it has updated the Deployment. Here every reconcile renders the
// Deployment from the spec (a migration is spec.storage.format DATABASE with
// folder and data.filename) and the annotation's change reconciles the CR
// (its watch has no predicate), so it asks for nothing more and changes no
// rendered byte. It is left on the CR: the operator never writes a user's
// metadata, and a GitOps tool would put it back anyway.
const AnnotationDBMigration = "trustyai.opendatahub.io/db-migration"
