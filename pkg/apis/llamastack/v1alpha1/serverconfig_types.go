package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ServerConfig is the server's run configuration (llama-stack's run.yaml),
// written as typed fields. The operator renders it into the ConfigMap
// <name>-config (key config.yaml). Field names are the camelCase of the
// run.yaml keys (metadataStore -> metadata_store); free-form objects (provider
// config, model metadata, ...) are passed to run.yaml verbatim, so their keys
// stay as llama-stack spells them (snake_case).
//
// Secrets never belong here: put them in spec.server.containerSpec.env
// (valueFrom.secretKeyRef) and reference them as ${env.NAME}, which llama-stack
// substitutes when it reads the file. The server port is not set here:
// spec.server.containerSpec.port is written to run.yaml's server.port.
type ServerConfig struct {
	// ServerVersion is the llama-stack version of the server this configuration
	// is written for, e.g. 0.2.23 or 0.7.1: it chooses the run.yaml layout
	// (before 0.3: metadata_store and inference_store at the top level; from
	// 0.3: storage backends and stores, registered_resources). When unset, the
	// version is read from the distribution image's tag (a name resolves to its
	// image); a tag that is not a version (latest, a digest) gives the newest
	// layout. Set it when the tag does not say the server's version.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^v?(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,3}))?$`
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`

	// Providers configures the providers of each API (run.yaml providers).
	// The APIs the server serves (run.yaml apis) are the APIs that have providers.
	// +optional
	Providers *Providers `json:"providers,omitempty"`

	// Models registered at startup (run.yaml models; registered_resources.models
	// from 0.3). Each model is served by an inference provider.
	// +listType=map
	// +listMapKey=modelId
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Models []Model `json:"models,omitempty"`

	// Shields registered at startup (run.yaml shields; registered_resources.shields
	// from 0.3), served by safety providers.
	// +listType=map
	// +listMapKey=shieldId
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Shields []Shield `json:"shields,omitempty"`

	// VectorDBs registered at startup (run.yaml vector_dbs; from 0.3
	// registered_resources.vector_stores), served by vectorIO providers.
	// +listType=map
	// +listMapKey=vectorDBId
	// +kubebuilder:validation:MaxItems=64
	// +optional
	VectorDBs []VectorDB `json:"vectorDBs,omitempty"`

	// ToolGroups registered at startup (run.yaml tool_groups; registered_resources.tool_groups
	// from 0.3), served by toolRuntime providers; servers before 0.7 (0.7
	// registers the built-in tool groups of its toolRuntime providers itself).
	// +listType=map
	// +listMapKey=toolGroupId
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ToolGroups []ToolGroup `json:"toolGroups,omitempty"`

	// MetadataStore is the key-value store of the distribution registry
	// (run.yaml metadata_store). From 0.3 it is the storage backend kv_default
	// (storage.backends.kv_default, the registry in storage.stores.metadata),
	// which provider configs reference by that name. A SQLite file when unset.
	// +optional
	MetadataStore *KVStore `json:"metadataStore,omitempty"`

	// InferenceStore is the SQL store of the inference API's chat completions
	// (run.yaml inference_store). From 0.3 it is the storage backend sql_default
	// (storage.backends.sql_default, used by storage.stores.inference and
	// conversations), which provider configs reference by that name. A SQLite
	// file when unset.
	// +optional
	InferenceStore *SQLStore `json:"inferenceStore,omitempty"`

	// Server configures the HTTP server (run.yaml server), except its port.
	// +optional
	Server *ServerSettings `json:"server,omitempty"`

	// Overrides is a free-form object merged into the rendered run.yaml last,
	// for keys this API does not model. It follows JSON merge patch (RFC 7386):
	// objects merge key by key, any other value (lists included) replaces what
	// was rendered, and null removes the key. Overrides win over every typed
	// field, except server.port, which is always spec.server.containerSpec.port.
	// Keys are run.yaml's own (snake_case).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Overrides *apiextensionsv1.JSON `json:"overrides,omitempty"`
}

// Providers lists the providers of each llama-stack API. Each list maps to the
// run.yaml providers entry of the same API (vectorIO -> vector_io).
type Providers struct {
	// Inference providers (run.yaml providers.inference), e.g. remote::vllm, remote::ollama.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Inference []Provider `json:"inference,omitempty"`

	// VectorIO providers (run.yaml providers.vector_io), e.g. inline::faiss, remote::pgvector.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	VectorIO []Provider `json:"vectorIO,omitempty"`

	// Safety providers (run.yaml providers.safety), e.g. inline::llama-guard.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Safety []Provider `json:"safety,omitempty"`

	// Agents providers (run.yaml providers.agents), e.g. inline::meta-reference;
	// servers before 0.7 (0.7 renamed the API responses).
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Agents []Provider `json:"agents,omitempty"`

	// Responses providers (run.yaml providers.responses), e.g. inline::builtin;
	// servers from 0.7, where they replace agents.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Responses []Provider `json:"responses,omitempty"`

	// Telemetry providers (run.yaml providers.telemetry), e.g. inline::meta-reference;
	// servers before 0.4 (later servers have no telemetry API).
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Telemetry []Provider `json:"telemetry,omitempty"`

	// ToolRuntime providers (run.yaml providers.tool_runtime), e.g. inline::rag-runtime,
	// remote::model-context-protocol.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ToolRuntime []Provider `json:"toolRuntime,omitempty"`

	// Eval providers (run.yaml providers.eval).
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Eval []Provider `json:"eval,omitempty"`

	// DatasetIO providers (run.yaml providers.datasetio).
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	DatasetIO []Provider `json:"datasetio,omitempty"`

	// Scoring providers (run.yaml providers.scoring).
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Scoring []Provider `json:"scoring,omitempty"`

	// Files providers (run.yaml providers.files), e.g. inline::localfs.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Files []Provider `json:"files,omitempty"`

	// PostTraining providers (run.yaml providers.post_training); servers before 0.7.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	PostTraining []Provider `json:"postTraining,omitempty"`

	// Batches providers (run.yaml providers.batches), e.g. inline::reference;
	// servers from 0.2.17.
	// +listType=map
	// +listMapKey=providerId
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Batches []Provider `json:"batches,omitempty"`
}

// Provider is one provider instance of an API.
type Provider struct {
	// ProviderID names this provider instance; models, shields, vector DBs and
	// tool groups refer to it. It is unique within its API. A conditional id such
	// as ${env.OLLAMA_URL:+ollama} enables the provider only when the variable is set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ProviderID string `json:"providerId"`

	// ProviderType is the implementation, inline::<name> or remote::<name>
	// (for example remote::vllm, inline::faiss).
	// +kubebuilder:validation:Pattern=`^(inline|remote)::.+$`
	ProviderType string `json:"providerType"`

	// Module is the Python module of an external provider (run.yaml module).
	// +kubebuilder:validation:MinLength=1
	// +optional
	Module string `json:"module,omitempty"`

	// Config is the provider's configuration, passed to run.yaml verbatim
	// (keys as the provider documents them, e.g. url, api_token). Reference
	// secrets as ${env.NAME}; never write them here.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Config *apiextensionsv1.JSON `json:"config,omitempty"`
}

// ModelType is the kind of a model.
// +kubebuilder:validation:Enum=llm;embedding
type ModelType string

// Model types.
const (
	ModelTypeLLM       ModelType = "llm"
	ModelTypeEmbedding ModelType = "embedding"
)

// Model is a model registered at startup (run.yaml models entry).
type Model struct {
	// ModelID is the model's name in llama-stack's API (run.yaml model_id).
	// +kubebuilder:validation:MinLength=1
	ModelID string `json:"modelId"`

	// ProviderID is the inference provider serving the model (run.yaml provider_id);
	// it must be one of providers.inference. llama-stack picks the only inference
	// provider when this is unset.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderID string `json:"providerId,omitempty"`

	// ProviderModelID is the model's name at the provider (run.yaml provider_model_id);
	// modelId when unset.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderModelID string `json:"providerModelId,omitempty"`

	// ModelType is llm or embedding (run.yaml model_type); llama-stack assumes llm when unset.
	// +optional
	ModelType ModelType `json:"modelType,omitempty"`

	// Metadata is passed to run.yaml verbatim (for embedding models, e.g.
	// embedding_dimension: 384).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Metadata *apiextensionsv1.JSON `json:"metadata,omitempty"`
}

// Shield is a safety shield registered at startup (run.yaml shields entry).
type Shield struct {
	// ShieldID is the shield's name in llama-stack's API (run.yaml shield_id).
	// +kubebuilder:validation:MinLength=1
	ShieldID string `json:"shieldId"`

	// ProviderID is the safety provider serving the shield (run.yaml provider_id);
	// it must be one of providers.safety.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderID string `json:"providerId,omitempty"`

	// ProviderShieldID is the shield's name at the provider, often a model id
	// (run.yaml provider_shield_id).
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderShieldID string `json:"providerShieldId,omitempty"`

	// Params are passed to run.yaml verbatim (run.yaml params).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Params *apiextensionsv1.JSON `json:"params,omitempty"`
}

// VectorDB is a vector database registered at startup (run.yaml vector_dbs entry).
type VectorDB struct {
	// VectorDBID is the vector database's name (run.yaml vector_db_id).
	// +kubebuilder:validation:MinLength=1
	VectorDBID string `json:"vectorDBId"`

	// EmbeddingModel is the model that embeds the documents (run.yaml embedding_model);
	// usually one of models with modelType embedding.
	// +kubebuilder:validation:MinLength=1
	EmbeddingModel string `json:"embeddingModel"`

	// EmbeddingDimension is the embedding model's dimension (run.yaml embedding_dimension).
	// +kubebuilder:validation:Minimum=1
	EmbeddingDimension int32 `json:"embeddingDimension"`

	// ProviderID is the vectorIO provider storing it (run.yaml provider_id);
	// it must be one of providers.vectorIO.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderID string `json:"providerId,omitempty"`

	// ProviderVectorDBID is its name at the provider (run.yaml provider_vector_db_id).
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderVectorDBID string `json:"providerVectorDBId,omitempty"`
}

// ToolGroup is a tool group registered at startup (run.yaml tool_groups entry).
type ToolGroup struct {
	// ToolGroupID is the tool group's name, e.g. builtin::rag or mcp::weather
	// (run.yaml toolgroup_id).
	// +kubebuilder:validation:MinLength=1
	ToolGroupID string `json:"toolGroupId"`

	// ProviderID is the toolRuntime provider serving the group (run.yaml provider_id);
	// it must be one of providers.toolRuntime.
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerId"`

	// MCPEndpoint is the URL of a Model Context Protocol server, for groups served
	// by remote::model-context-protocol (run.yaml mcp_endpoint.uri).
	// +kubebuilder:validation:MinLength=1
	// +optional
	MCPEndpoint string `json:"mcpEndpoint,omitempty"`

	// Args are passed to the provider verbatim (run.yaml args).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Args *apiextensionsv1.JSON `json:"args,omitempty"`
}

// KVStoreType is a key-value store backend.
// +kubebuilder:validation:Enum=sqlite;postgres;redis;mongodb
type KVStoreType string

// Key-value store backends.
const (
	KVStoreSQLite   KVStoreType = "sqlite"
	KVStorePostgres KVStoreType = "postgres"
	KVStoreRedis    KVStoreType = "redis"
	KVStoreMongoDB  KVStoreType = "mongodb"
)

// KVStore is a key-value store backend (llama-stack's KVStoreConfig). Each
// field applies to the backends its description names.
// +kubebuilder:validation:XValidation:rule="!has(self.dbPath) || self.type == 'sqlite'",message="dbPath applies only to type sqlite"
// +kubebuilder:validation:XValidation:rule="self.type != 'postgres' || has(self.user)",message="type postgres requires user"
// +kubebuilder:validation:XValidation:rule="!has(self.password) || self.password.contains('${env.')",message="password must reference an environment variable, e.g. ${env.POSTGRES_PASSWORD}, set from a Secret in spec.server.containerSpec.env"
type KVStore struct {
	// Type is the backend: sqlite, postgres, redis or mongodb.
	Type KVStoreType `json:"type"`

	// Namespace prefixes every key (all backends). From 0.3 it is the
	// registry's namespace, storage.stores.metadata.namespace (registry when unset).
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// DBPath is the database file (sqlite), e.g. /.llama/registry.db; put it on
	// spec.server.storage to keep it across restarts.
	// +kubebuilder:validation:MinLength=1
	// +optional
	DBPath string `json:"dbPath,omitempty"`

	// Host of the server (postgres, redis, mongodb).
	// +kubebuilder:validation:MinLength=1
	// +optional
	Host string `json:"host,omitempty"`

	// Port of the server (postgres, redis, mongodb): a number or an ${env.NAME} reference.
	// +kubebuilder:validation:XIntOrString
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`

	// DB is the database name (postgres, mongodb).
	// +kubebuilder:validation:MinLength=1
	// +optional
	DB string `json:"db,omitempty"`

	// User to connect as (postgres: required; mongodb).
	// +kubebuilder:validation:MinLength=1
	// +optional
	User string `json:"user,omitempty"`

	// Password to connect with (postgres, mongodb). It must be an ${env.NAME}
	// reference to a variable set from a Secret in spec.server.containerSpec.env.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Password string `json:"password,omitempty"`

	// TableName is the table holding the keys (postgres).
	// +kubebuilder:validation:MinLength=1
	// +optional
	TableName string `json:"tableName,omitempty"`

	// CollectionName is the collection holding the keys (mongodb).
	// +kubebuilder:validation:MinLength=1
	// +optional
	CollectionName string `json:"collectionName,omitempty"`
}

// SQLStoreType is a SQL store backend.
// +kubebuilder:validation:Enum=sqlite;postgres
type SQLStoreType string

// SQL store backends.
const (
	SQLStoreSQLite   SQLStoreType = "sqlite"
	SQLStorePostgres SQLStoreType = "postgres"
)

// SQLStore is a SQL store backend (llama-stack's SqlStoreConfig). Each field
// applies to the backends its description names.
// +kubebuilder:validation:XValidation:rule="!has(self.dbPath) || self.type == 'sqlite'",message="dbPath applies only to type sqlite"
// +kubebuilder:validation:XValidation:rule="self.type != 'postgres' || has(self.user)",message="type postgres requires user"
// +kubebuilder:validation:XValidation:rule="!has(self.password) || self.password.contains('${env.')",message="password must reference an environment variable, e.g. ${env.POSTGRES_PASSWORD}, set from a Secret in spec.server.containerSpec.env"
type SQLStore struct {
	// Type is the backend: sqlite or postgres.
	Type SQLStoreType `json:"type"`

	// DBPath is the database file (sqlite), e.g. /.llama/inference_store.db.
	// +kubebuilder:validation:MinLength=1
	// +optional
	DBPath string `json:"dbPath,omitempty"`

	// Host of the server (postgres).
	// +kubebuilder:validation:MinLength=1
	// +optional
	Host string `json:"host,omitempty"`

	// Port of the server (postgres): a number or an ${env.NAME} reference.
	// +kubebuilder:validation:XIntOrString
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`

	// DB is the database name (postgres).
	// +kubebuilder:validation:MinLength=1
	// +optional
	DB string `json:"db,omitempty"`

	// User to connect as (postgres: required).
	// +kubebuilder:validation:MinLength=1
	// +optional
	User string `json:"user,omitempty"`

	// Password to connect with (postgres). It must be an ${env.NAME} reference
	// to a variable set from a Secret in spec.server.containerSpec.env.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Password string `json:"password,omitempty"`
}

// ServerSettings configures llama-stack's HTTP server (run.yaml server). The
// port is not here: it is spec.server.containerSpec.port.
// +kubebuilder:validation:XValidation:rule="has(self.tlsCertFile) == has(self.tlsKeyFile)",message="set both tlsCertFile and tlsKeyFile, or neither"
type ServerSettings struct {
	// Host is the address to listen on (run.yaml server.host); all addresses when unset.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Host string `json:"host,omitempty"`

	// TLSCertFile is the path of the TLS certificate in the container, which turns
	// on HTTPS (run.yaml server.tls_certfile). Mount it from a Secret.
	// +kubebuilder:validation:MinLength=1
	// +optional
	TLSCertFile string `json:"tlsCertFile,omitempty"`

	// TLSKeyFile is the path of the TLS key in the container (run.yaml server.tls_keyfile).
	// +kubebuilder:validation:MinLength=1
	// +optional
	TLSKeyFile string `json:"tlsKeyFile,omitempty"`

	// TLSCAFile is the path of a CA bundle that turns on mutual TLS
	// (run.yaml server.tls_cafile).
	// +kubebuilder:validation:MinLength=1
	// +optional
	TLSCAFile string `json:"tlsCAFile,omitempty"`

	// Auth is the authentication configuration, passed to run.yaml server.auth
	// verbatim (provider_config, access_policy). Reference secrets as ${env.NAME}.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Auth *apiextensionsv1.JSON `json:"auth,omitempty"`
}
