// Package evalhub is the EvalHub kind (trustyai.opendatahub.io/v1, v1alpha1
// served with the same schema) for the release reconciler: an eval-hub
// server behind kube-rbac-proxy, and optionally its MCP server, rendered by
// charts/eval-hub with upstream trustyai-service-operator's objects and
// names (controllers/evalhub at 11c335b); the server's config.yaml computed
// from the CR; provider and collection definitions copied from the
// operator's namespace; the MLflow CA sources merged by pkg/trust.
// docs/trustyai.md describes it for users, docs/compatibility.md where it
// differs from upstream.
package evalhub
