// Package nemoguardrails is the NemoGuardrails kind (trustyai.opendatahub.io/
// v1alpha1) for the release reconciler: a NeMo Guardrails server rendered
// by charts/nemo-guardrails with upstream trustyai-service-operator's
// objects and names (controllers/nemo_guardrails at 11c335b), its
// configurations' ConfigMaps hashed onto the pods, the CA sources merged by
// pkg/trust into one bundle, and with auth (security.opendatahub.io/
// enable-auth) the proxy's ClusterRoleBinding. docs/trustyai.md describes
// it for users, docs/compatibility.md where it differs from upstream.
package nemoguardrails
