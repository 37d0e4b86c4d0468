package runconfig

import (
	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// The storage backends SchemaStorage always writes. llama-stack's own
// distributions use these names, and its store defaults (prompts, connectors
// from 0.4) point at them, so provider configs can reference them.
const (
	kvBackend  = "kv_default"
	sqlBackend = "sql_default"
)

// Where the backends are when the CR does not say: the files a 0.7 server
// uses when run.yaml has no storage section (SQLITE_STORE_DIR moves them).
const (
	defaultKVPath  = "${env.SQLITE_STORE_DIR:=~/.llama/distributions}/kvstore.db"
	defaultSQLPath = "${env.SQLITE_STORE_DIR:=~/.llama/distributions}/sql_store.db"
)

// backendShape orders a storage backend's keys.
var backendShape = &shape{keys: []string{"type", "namespace", "db_path", "host", "port", "db", "user", "password",
	"table_name", "collection_name"}}

// storeShape orders a store reference's keys (as llama-stack's distributions print them).
var storeShape = &shape{keys: []string{"namespace", "table_name", "backend", "max_write_queue_size", "num_writers"}}

// shapeStorage is the key order of SchemaStorage: StackConfig's field order
// (0.3 to 0.7; distro_name from 0.5) and of its sections; unknown keys follow, sorted.
var shapeStorage = &shape{
	keys: []string{"version", "distro_name", "image_name", "container_image", "apis", "providers",
		"storage", "registered_resources", "logging", "telemetry", "server",
		"external_providers_dir", "external_apis_dir", "vector_stores", "safety", "connectors"},
	field: map[string]*shape{
		"providers": shapeV2.field["providers"],
		"storage": {
			keys: []string{"backends", "stores"},
			field: map[string]*shape{
				"backends": {each: backendShape},
				"stores": {keys: []string{"metadata", "inference", "conversations", "responses", "prompts", "connectors"},
					each: storeShape},
			},
		},
		"registered_resources": {
			keys: []string{"models", "shields", "vector_stores", "datasets", "scoring_fns", "benchmarks", "tool_groups"},
			field: map[string]*shape{
				"models":  shapeV2.field["models"],
				"shields": shapeV2.field["shields"],
				"vector_stores": {keys: []string{"vector_store_id", "embedding_model", "embedding_dimension",
					"provider_id", "provider_vector_store_id"}},
				"tool_groups": shapeV2.field["tool_groups"],
			},
		},
		"server": shapeV2.field["server"],
	},
}

// emitStorage writes the run.yaml of SchemaStorage, llama-stack 0.3 and later
// (StackRunConfig, StackConfig from 0.5, in core/datatypes.py; StorageConfig
// in core/storage/datatypes.py). It differs from SchemaV2 in:
//   - the name key: image_name before 0.5, distro_name from 0.5;
//   - storage: metadataStore and inferenceStore become the backends
//     kv_default and sql_default, and the stores metadata, inference and
//     conversations reference them (0.3 requires the backends);
//   - registered_resources holds the models, shields, vector_stores (0.2's
//     vector_dbs, ids renamed) and tool_groups.
func emitStorage(cfg *v1alpha1.ServerConfig, opts Options, v Version) (*object, error) {
	nameKey := "distro_name"
	if v.Less(Version{0, 5, 0}) {
		nameKey = "image_name"
	}
	doc, err := head(cfg, opts, nameKey)
	if err != nil {
		return nil, err
	}
	doc.set("storage", storage(cfg))

	resources := newObject()
	models, err := modelsV2(cfg.Models)
	if err != nil {
		return nil, err
	}
	resources.setList("models", models)
	shields, err := shieldsV2(cfg.Shields)
	if err != nil {
		return nil, err
	}
	resources.setList("shields", shields)
	resources.setList("vector_stores", vectorStores(cfg.VectorDBs))
	groups, err := toolGroupsV2(cfg.ToolGroups)
	if err != nil {
		return nil, err
	}
	resources.setList("tool_groups", groups)
	doc.setObject("registered_resources", resources)

	server, err := serverV2(cfg.Server, opts.Port)
	if err != nil {
		return nil, err
	}
	doc.set("server", server)
	return doc, nil
}

// storage writes the storage section: two backends and the stores of the
// stack's core that exist in every storage release.
func storage(cfg *v1alpha1.ServerConfig) *object {
	backends := newObject()
	backends.set(kvBackend, kvBackendConfig(cfg.MetadataStore))
	backends.set(sqlBackend, sqlBackendConfig(cfg.InferenceStore))

	namespace := "registry"
	if cfg.MetadataStore != nil && cfg.MetadataStore.Namespace != "" {
		namespace = cfg.MetadataStore.Namespace
	}
	stores := newObject()
	stores.set("metadata", storeRef("namespace", namespace, kvBackend))
	stores.set("inference", storeRef("table_name", "inference_store", sqlBackend))
	stores.set("conversations", storeRef("table_name", "openai_conversations", sqlBackend))

	o := newObject()
	o.set("backends", backends)
	o.set("stores", stores)
	return o
}

func storeRef(key, value, backend string) *object {
	o := newObject()
	o.set(key, value)
	o.set("backend", backend)
	return o
}

// kvBackendConfig writes a key-value backend (type kv_<type>). The namespace
// is the store reference's, which wins over a backend's in llama-stack.
func kvBackendConfig(s *v1alpha1.KVStore) *object {
	o := newObject()
	if s == nil {
		o.set("type", "kv_sqlite")
		o.set("db_path", defaultKVPath)
		return o
	}
	o.set("type", "kv_"+string(s.Type))
	o.setString("db_path", s.DBPath)
	if s.Type == v1alpha1.KVStoreSQLite && s.DBPath == "" {
		o.set("db_path", defaultKVPath) // required by llama-stack
	}
	o.setString("host", s.Host)
	setPort(o, s.Port)
	o.setString("db", s.DB)
	o.setString("user", s.User)
	o.setString("password", s.Password)
	o.setString("table_name", s.TableName)
	o.setString("collection_name", s.CollectionName)
	return o
}

// sqlBackendConfig writes a SQL backend (type sql_<type>).
func sqlBackendConfig(s *v1alpha1.SQLStore) *object {
	o := newObject()
	if s == nil {
		o.set("type", "sql_sqlite")
		o.set("db_path", defaultSQLPath)
		return o
	}
	o.set("type", "sql_"+string(s.Type))
	o.setString("db_path", s.DBPath)
	if s.Type == v1alpha1.SQLStoreSQLite && s.DBPath == "" {
		o.set("db_path", defaultSQLPath) // required by llama-stack
	}
	o.setString("host", s.Host)
	setPort(o, s.Port)
	o.setString("db", s.DB)
	o.setString("user", s.User)
	o.setString("password", s.Password)
	return o
}

// vectorStores writes VectorStoreInput entries: 0.2's vector_dbs with the ids renamed.
func vectorStores(dbs []v1alpha1.VectorDB) []any {
	out := make([]any, 0, len(dbs))
	for _, d := range dbs {
		o := newObject()
		o.set("vector_store_id", d.VectorDBID)
		o.set("embedding_model", d.EmbeddingModel)
		o.set("embedding_dimension", int64(d.EmbeddingDimension))
		o.setString("provider_id", d.ProviderID)
		o.setString("provider_vector_store_id", d.ProviderVectorDBID)
		out = append(out, o)
	}
	return out
}
