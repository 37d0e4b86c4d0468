package runconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

const ollamaProviders = `providers:
  inference:
    - provider_id: ollama
      provider_type: remote::ollama
      config:
        url: ${env.OLLAMA_URL:=http://localhost:11434}
`

func TestRenderMapping(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(t *testing.T) *v1alpha1.ServerConfig
		opts Options
		want string
	}{{
		name: "one provider: apis derived, server port from options",
		cfg:  func(*testing.T) *v1alpha1.ServerConfig { return ollama() },
		opts: Options{ImageName: "starter", Image: imageV2, Port: 9000},
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `server:
  port: 9000
`,
	}, {
		name: "port defaults to 8321; image name as given",
		cfg:  func(*testing.T) *v1alpha1.ServerConfig { return ollama() },
		opts: Options{ImageName: "quay.io/me/llama:0.2.1", Image: "quay.io/me/llama:0.2.1"},
		want: `version: 2
image_name: quay.io/me/llama:0.2.1
apis:
  - inference
` + ollamaProviders + `server:
  port: 8321
`,
	}, {
		name: "explicit apis kept in the given order",
		cfg:  func(*testing.T) *v1alpha1.ServerConfig { return ollama() },
		opts: Options{ImageName: "starter", Image: imageV2, APIs: []string{"inference", "agents"}},
		want: `version: 2
image_name: starter
apis:
  - inference
  - agents
` + ollamaProviders + `server:
  port: 8321
`,
	}, {
		name: "apis sorted; providers in API order; module; no config",
		cfg: func(*testing.T) *v1alpha1.ServerConfig {
			return &v1alpha1.ServerConfig{Providers: &v1alpha1.Providers{
				ToolRuntime:  []v1alpha1.Provider{{ProviderID: "rag", ProviderType: "inline::rag-runtime"}},
				VectorIO:     []v1alpha1.Provider{{ProviderID: "faiss", ProviderType: "inline::faiss"}},
				PostTraining: []v1alpha1.Provider{{ProviderID: "ext", ProviderType: "remote::ext", Module: "ext_provider"}},
				DatasetIO:    []v1alpha1.Provider{{ProviderID: "hf", ProviderType: "remote::huggingface"}},
			}}
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - datasetio
  - post_training
  - tool_runtime
  - vector_io
providers:
  vector_io:
    - provider_id: faiss
      provider_type: inline::faiss
  tool_runtime:
    - provider_id: rag
      provider_type: inline::rag-runtime
  datasetio:
    - provider_id: hf
      provider_type: remote::huggingface
  post_training:
    - provider_id: ext
      provider_type: remote::ext
      module: ext_provider
server:
  port: 8321
`,
	}, {
		name: "resources: models, shields, vector_dbs, tool_groups",
		cfg: func(t *testing.T) *v1alpha1.ServerConfig {
			c := ollama()
			c.Providers.Safety = []v1alpha1.Provider{{ProviderID: "llama-guard", ProviderType: "inline::llama-guard"}}
			c.Providers.VectorIO = []v1alpha1.Provider{{ProviderID: "faiss", ProviderType: "inline::faiss"}}
			c.Providers.ToolRuntime = []v1alpha1.Provider{{ProviderID: "mcp", ProviderType: "remote::model-context-protocol"}}
			c.Models = []v1alpha1.Model{
				{ModelID: "llama3.2:1b", ProviderID: "ollama", ProviderModelID: "llama3.2:1b-instruct", ModelType: v1alpha1.ModelTypeLLM},
				{ModelID: "all-MiniLM-L6-v2", ModelType: v1alpha1.ModelTypeEmbedding, Metadata: js(t, "embedding_dimension: 384")},
			}
			c.Shields = []v1alpha1.Shield{{ShieldID: "guard", ProviderID: "llama-guard", ProviderShieldID: "llama-guard3:1b", Params: js(t, "x: 1")}}
			c.VectorDBs = []v1alpha1.VectorDB{{VectorDBID: "docs", EmbeddingModel: "all-MiniLM-L6-v2", EmbeddingDimension: 384, ProviderID: "faiss", ProviderVectorDBID: "docs-1"}}
			c.ToolGroups = []v1alpha1.ToolGroup{{ToolGroupID: "mcp::weather", ProviderID: "mcp", MCPEndpoint: "http://weather:8000/sse", Args: js(t, "units: metric")}}
			return c
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
  - safety
  - tool_runtime
  - vector_io
providers:
  inference:
    - provider_id: ollama
      provider_type: remote::ollama
      config:
        url: ${env.OLLAMA_URL:=http://localhost:11434}
  vector_io:
    - provider_id: faiss
      provider_type: inline::faiss
  safety:
    - provider_id: llama-guard
      provider_type: inline::llama-guard
  tool_runtime:
    - provider_id: mcp
      provider_type: remote::model-context-protocol
models:
  - model_id: llama3.2:1b
    provider_id: ollama
    provider_model_id: llama3.2:1b-instruct
    model_type: llm
  - model_id: all-MiniLM-L6-v2
    model_type: embedding
    metadata:
      embedding_dimension: 384
shields:
  - shield_id: guard
    provider_id: llama-guard
    provider_shield_id: llama-guard3:1b
    params:
      x: 1
vector_dbs:
  - vector_db_id: docs
    embedding_model: all-MiniLM-L6-v2
    embedding_dimension: 384
    provider_id: faiss
    provider_vector_db_id: docs-1
tool_groups:
  - toolgroup_id: mcp::weather
    provider_id: mcp
    mcp_endpoint:
      uri: http://weather:8000/sse
    args:
      units: metric
server:
  port: 8321
`,
	}, {
		name: "stores: sqlite kvstore, postgres sqlstore with env references",
		cfg: func(*testing.T) *v1alpha1.ServerConfig {
			c := ollama()
			c.MetadataStore = &v1alpha1.KVStore{Type: v1alpha1.KVStoreSQLite, Namespace: "registry", DBPath: "/.llama/registry.db"}
			port := intstr.FromString("${env.POSTGRES_PORT:=5432}")
			c.InferenceStore = &v1alpha1.SQLStore{
				Type: v1alpha1.SQLStorePostgres, Host: "pg", Port: &port, DB: "llama",
				User: "${env.POSTGRES_USER}", Password: "${env.POSTGRES_PASSWORD}",
			}
			return c
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `metadata_store:
  type: sqlite
  namespace: registry
  db_path: /.llama/registry.db
inference_store:
  type: postgres
  host: pg
  port: ${env.POSTGRES_PORT:=5432}
  db: llama
  user: ${env.POSTGRES_USER}
  password: ${env.POSTGRES_PASSWORD}
server:
  port: 8321
`,
	}, {
		name: "stores: redis and postgres kvstore fields, integer port",
		cfg: func(*testing.T) *v1alpha1.ServerConfig {
			c := ollama()
			port := intstr.FromInt32(6379)
			c.MetadataStore = &v1alpha1.KVStore{Type: v1alpha1.KVStoreRedis, Host: "redis", Port: &port}
			return c
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `metadata_store:
  type: redis
  host: redis
  port: 6379
server:
  port: 8321
`,
	}, {
		name: "server settings",
		cfg: func(t *testing.T) *v1alpha1.ServerConfig {
			c := ollama()
			c.Server = &v1alpha1.ServerSettings{
				Host: "0.0.0.0", TLSCertFile: "/tls/tls.crt", TLSKeyFile: "/tls/tls.key", TLSCAFile: "/tls/ca.crt",
				Auth: js(t, `provider_config: {type: custom, endpoint: "http://auth:8080/validate"}`),
			}
			return c
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `server:
  port: 8321
  host: "0.0.0.0"
  tls_certfile: /tls/tls.crt
  tls_keyfile: /tls/tls.key
  tls_cafile: /tls/ca.crt
  auth:
    provider_config:
      endpoint: http://auth:8080/validate
      type: custom
`,
	}, {
		name: "free-form scalars keep their types; strings that look like other types are quoted",
		cfg: func(*testing.T) *v1alpha1.ServerConfig {
			c := ollama()
			c.Providers.Inference[0].Config = rawJSON(
				`{"url":"http://o:11434","n":4096,"f":0.5,"b":true,"s":"true","z":"8321","nil":null,"l":["a",1],"e":{}}`)
			return c
		},
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
providers:
  inference:
    - provider_id: ollama
      provider_type: remote::ollama
      config:
        b: true
        e: {}
        f: 0.5
        l:
          - a
          - 1
        "n": 4096
        nil: null
        s: "true"
        url: http://o:11434
        z: "8321"
server:
  port: 8321
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(tt.cfg(t), tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
		})
	}
}

func TestRenderOverrides(t *testing.T) {
	tests := []struct {
		name      string
		overrides string
		opts      Options
		want      string
	}{{
		name: "objects merge, lists replace, null removes, new keys follow",
		overrides: `{"providers":{"inference":[{"provider_id":"vllm","provider_type":"remote::vllm"}],` +
			`"telemetry":[{"provider_id":"otel","provider_type":"inline::meta-reference"}]},` +
			`"server":{"host":"::"},"metadata_store":null,"telemetry":{"enabled":true},"external_providers_dir":"/ext"}`,
		opts: defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
  - telemetry
providers:
  inference:
    - provider_id: vllm
      provider_type: remote::vllm
  telemetry:
    - provider_id: otel
      provider_type: inline::meta-reference
server:
  port: 8321
  host: '::'
external_providers_dir: /ext
telemetry:
  enabled: true
`,
	}, {
		name:      "overridden apis win over derived ones",
		overrides: `{"apis":["inference","inspect"]}`,
		opts:      defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
  - inspect
` + ollamaProviders + `metadata_store:
  type: sqlite
  db_path: /.llama/registry.db
server:
  port: 8321
`,
	}, {
		name:      "explicit option apis are not re-derived after the merge",
		overrides: `{"providers":{"safety":[{"provider_id":"g","provider_type":"inline::llama-guard"}]}}`,
		opts:      Options{ImageName: "starter", Image: imageV2, APIs: []string{"inference"}},
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `  safety:
    - provider_id: g
      provider_type: inline::llama-guard
metadata_store:
  type: sqlite
  db_path: /.llama/registry.db
server:
  port: 8321
`,
	}, {
		name:      "removing server keeps the container port",
		overrides: `{"server":null,"version":3,"image_name":"custom"}`,
		opts:      defaultOpts,
		want: `version: 3
image_name: custom
apis:
  - inference
` + ollamaProviders + `metadata_store:
  type: sqlite
  db_path: /.llama/registry.db
server:
  port: 8321
`,
	}, {
		name:      "nested merge into a store",
		overrides: `{"metadata_store":{"namespace":"reg","db_path":null}}`,
		opts:      defaultOpts,
		want: `version: 2
image_name: starter
apis:
  - inference
` + ollamaProviders + `metadata_store:
  type: sqlite
  namespace: reg
server:
  port: 8321
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ollama()
			c.MetadataStore = &v1alpha1.KVStore{Type: v1alpha1.KVStoreSQLite, DBPath: "/.llama/registry.db"}
			c.Overrides = rawJSON(tt.overrides)
			out, err := Render(c, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
		})
	}
}

func TestRenderReferencesResolveAfterOverrides(t *testing.T) {
	c := ollama()
	c.Models = []v1alpha1.Model{{ModelID: "m", ProviderID: "vllm"}}
	_, err := Render(c, defaultOpts)
	require.Error(t, err, "vllm is not defined without overrides")

	c.Overrides = rawJSON(`{"providers":{"inference":[{"provider_id":"vllm","provider_type":"remote::vllm"}]}}`)
	_, err = Render(c, defaultOpts)
	require.NoError(t, err, "overrides define vllm")
}

func TestRenderConditionalProviderIDs(t *testing.T) {
	c := ollama()
	c.Providers.Inference[0].ProviderID = "${env.OLLAMA_URL:+ollama}"
	c.Models = []v1alpha1.Model{
		{ModelID: "a", ProviderID: "ollama"},
		{ModelID: "b", ProviderID: "${env.OLLAMA_URL:+ollama}"},
		{ModelID: "c", ProviderID: "${env.PROVIDER}"}, // cannot be resolved here: not checked
	}
	out, err := Render(c, defaultOpts)
	require.NoError(t, err)
	assert.Contains(t, string(out), "provider_id: ${env.OLLAMA_URL:+ollama}\n")

	c.Models = append(c.Models, v1alpha1.Model{ModelID: "d", ProviderID: "${env.X:+vllm}"})
	_, err = Render(c, defaultOpts)
	var fe *status.Failure
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "spec.server.config.models[3].providerId", fe.Field)
}

func TestRenderOperatorErrors(t *testing.T) {
	_, err := Render(nil, defaultOpts)
	require.EqualError(t, err, "runconfig: no config to render")

	_, err = Render(ollama(), Options{Port: 8321})
	require.EqualError(t, err, "runconfig: Options.ImageName is required")

	_, err = Render(nil, defaultOpts)
	var fe *status.Failure
	assert.NotErrorAs(t, err, &fe, "operator errors are not field errors")
}
