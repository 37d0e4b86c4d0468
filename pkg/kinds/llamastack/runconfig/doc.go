// Package runconfig renders a LlamaStackDistribution's spec.server.config
// (v1alpha1.ServerConfig) into llama-stack's run configuration, run.yaml,
// which the operator stores in the ConfigMap <name>-config (key config.yaml).
//
// It is pure: no API calls, no controller-runtime. Render validates what the
// CRD's schema cannot (references between sections, duplicates, fields that do
// not apply to a store's type), emits the document for a run.yaml schema,
// merges spec.server.config.overrides into it (JSON merge patch, last), and
// encodes it as deterministic YAML: the same input gives the same bytes.
// Keys of known sections follow llama-stack's own order (version, image_name,
// apis, providers, ...); keys of free-form objects are sorted; lists keep the
// user's order.
//
// # Versioning
//
// The CR types are stable; run.yaml is not. Each run.yaml layout the operator
// can write is a Schema with its own emitter (v2.go: SchemaV2, llama-stack
// 0.2.x, `version: 2`). A later layout (llama-stack 0.3 moved metadata_store
// and inference_store under `storage:`, still at version 2) gets a new Schema
// and emitter beside it, chosen through Options.Schema; validation of the CR
// (validate.go) and the overrides merge are shared by all of them.
//
// # Errors
//
// Errors the user can fix in the CR are *status.Failure values (reason InvalidSpec) naming the CR path
// (spec.server.config...) and the fix; anything else is a plain error.
package runconfig
