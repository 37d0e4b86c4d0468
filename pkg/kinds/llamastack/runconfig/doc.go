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
// The CR types are stable; run.yaml is not. Each run.yaml layout is a Schema
// with its own emitter: SchemaV2 (v2.go, llama-stack before 0.3) and
// SchemaStorage (storage.go, 0.3 to 0.7.1: storage backends and stores,
// registered_resources, distro_name from 0.5), both `version: 2`. TargetFor
// picks the server version: spec.server.config.serverVersion, else the
// image tag, else Newest. Fields a version does not read are refused
// (compat.go); validation of the CR (validate.go) and the overrides merge are
// shared by all layouts.
//
// # Errors
//
// Errors the user can fix in the CR are *status.Failure values (reason InvalidSpec) naming the CR path
// (spec.server.config...) and the fix; anything else is a plain error.
package runconfig
