// Package configgen generates an OGXServer's server config (config.yaml)
// from a base config and the CR's providers, resources, storage and
// disabledAPIs ("generated mode", see Active).
//
// It is pure: no API calls, no controller-runtime. The same Input gives the
// same bytes: map keys are sorted, lists keep their order. Errors the user
// fixes are *status.Failure values (reason InvalidSpec) naming the CR field
// (spec.providers..., spec.resources.models[i]..., spec.storage...,
// spec.baseConfig for the base config) and the fix.
//
// # Semantics
//
// The base must be a YAML map with a version; version is written as a
// string ("2"), distro_name is Input.DistroName and image_name is dropped.
// Per API of spec.providers, the spec's providers replace the base's;
// provider IDs default as in v1beta1 (DeriveID). Secrets are read through
// variables OGX_<norm(providerID)>_<FIELD> (norm: upper case, runs of other
// characters than A-Z0-9 made one '_', trimmed, '_' before a leading digit,
// "_" for nothing), referenced as ${env.NAME}; a custom provider's
// secretRefs key k gives config key k and FIELD norm(k). apis is the
// base's without disabledAPIs; models of spec.resources replace the base's;
// server.port is spec.network.port (else the base's, else 8321); storage is
// generated only when spec.storage is set. Output.Prelude is a shell
// snippet the container runs before the server when the config reads
// variables it sets (postgres from a connection string); else empty.
//
// # Differences from upstream's operator (ogx-ai/ogx-k8s-operator)
//
// Deliberate improvements:
//   - Top-level keys of the base that are not generated (telemetry,
//     logging, connectors, safety, external_providers_dir, ...) are kept;
//     upstream drops them. So are the other keys of registered_resources
//     (shields, ...) and of the base's provider entries (module, ...).
//   - apis gets the API of every provider of the spec (when the base lists
//     its APIs); upstream forgets them.
//   - The providers of a disabled API are removed; upstream leaves them.
//     Providers given for a disabled API are an error.
//   - A model without provider gets the first inference provider whose ID
//     does not depend on an environment variable; upstream takes the
//     lexicographically smallest, templated or not. A model naming a
//     provider that is not an inference provider of the config (nor "all",
//     nor a value an env-templated ID can take) is an error.
//   - Two providers of the spec with one ID, in any APIs, are an error
//     (upstream's webhook refuses them).
//   - The base is read as the server reads it (YAML 1.1: yes/no/on/off are
//     booleans, 1e6 is a string, 1:20 is 80) and written so that the server
//     reads the same values; floats keep a '.' (60.0, 1.0e+06).
//   - When spec.storage is unset and the base defines storage.backends
//     without kv_default or sql_default, which generated providers use, it
//     is an error naming spec.baseConfig.
//   - Input.ServerTLS sets server.tls_certfile and tls_keyfile (upstream
//     ignores spec.network.tls).
//   - Without Input.DistroName, the base's distro_name (else image_name) is
//     kept.
//
// Where upstream generates what the OGX server (ogx-ai/ogx 5a9cb55) does
// not accept, the server's schema is followed:
//   - Provider types: inline::file-search (not inline::rag-runtime),
//     inline::reference (not inline::batch-reference), inline::builtin (not
//     inline::responses). The server has no inline::auto or
//     inline::markitdown file processor: they are an error.
//   - Config fields the server requires are written: localfs storage_dir and
//     metadata_store, s3 metadata_store, reference kvstore, builtin
//     responses persistence, milvus token (null when unset) and
//     persistence, qdrant persistence, pgvector persistence (read at
//     startup). Vector_io providers get the namespace vector_io::<id>.
//   - pgvector vector_index is {type: HNSW, m, ef_construction, ef_search}
//     or {type: IVFFlat, lists, probes}; nprobe must be below nlist.
//   - network.proxy.cacert (not ca_cert); proxy url with http/https is an
//     error.
//   - Model contextLength and quantization go in the model's metadata (the
//     server's ModelInput has no such fields); modelType must be llm,
//     embedding or rerank.
//   - spec.network.port below 1024 is an error (the server refuses it).
//   - providers is always written, {} when empty (a required field of the
//     server's StackConfig); upstream omits it.
//   - Redis: host and port split from the endpoint (the server connects to
//     redis://host:port); the password, which the server has no setting
//     for, goes in the URL's user information (host ":${env.OGX_STORAGE_KV_PASSWORD}@redis"),
//     so it must be URL-safe. rediss://, database paths and credentials in
//     the endpoint are errors.
//   - Postgres from a connection string: the server's sql_postgres backend
//     has no connection string setting; it takes host, port, db, user and
//     password. The Secret key is OGX_STORAGE_SQL_CONNECTION_STRING of
//     Env, and sql_default reads ${env.OGX_STORAGE_SQL_HOST}, _PORT, _DB,
//     _USER and _PASSWORD, which Output.Prelude (a sh snippet, with
//     python3, run in the container before the server) exports from the
//     URL; it exits 1 with a message on stderr when the URL cannot be used
//     (not postgres:// or postgresql://, no host, database, user or
//     password, bad port, several hosts). The server builds
//     postgresql+asyncpg://user:password@host:port/db and SQLAlchemy
//     percent-decodes its user and password, so these are exported
//     percent-encoded (and the first character encoded when the server
//     would read the value as a number or boolean, or expand a leading ~).
//     The URL's query parameters (sslmode, ...) are dropped: the backend
//     has no setting for them (asyncpg then uses $PGSSLMODE, else
//     prefer: TLS when the server offers it, without verification). A
//     postgres backend can also come from the base config, with
//     spec.storage unset.
//   - The generated stores add connectors to upstream's metadata,
//     inference, conversations and prompts; the base's other backends and
//     stores are kept.
package configgen
