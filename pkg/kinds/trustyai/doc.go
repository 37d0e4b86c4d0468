// Package trustyai is the TrustyAIService kind (trustyai.opendatahub.io/v1,
// v1alpha1 served with the same spec) for the release reconciler: a
// TrustyAI service behind kube-rbac-proxy, with its data on a PVC or in a
// database, rendered by charts/trustyai-service with upstream
// trustyai-service-operator's objects and names (at 11c335b); the CA
// sources merged by pkg/trust into one bundle; the proxy's
// ClusterRoleBinding; and the wiring of the namespace's model servers
// (KServe InferenceServices, ModelMesh Deployments) to send their
// inferences to the service. docs/trustyai.md describes it for users,
// docs/compatibility.md where it differs from upstream.
package trustyai
