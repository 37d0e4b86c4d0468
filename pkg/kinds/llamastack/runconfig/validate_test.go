package runconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func TestRenderFieldErrors(t *testing.T) {
	two := func() *v1alpha1.ServerConfig {
		c := ollama()
		c.Providers.Inference = append(c.Providers.Inference,
			v1alpha1.Provider{ProviderID: "vllm", ProviderType: "remote::vllm"})
		return c
	}
	port := intstr.FromInt32(5432)
	tests := []struct {
		name    string
		cfg     func(*v1alpha1.ServerConfig)
		field   string
		message string
	}{{
		name: "model refers to an undefined provider",
		cfg: func(c *v1alpha1.ServerConfig) {
			*c = *two()
			c.Models = []v1alpha1.Model{{ModelID: "a", ProviderID: "ollama"}, {ModelID: "b"}, {ModelID: "c", ProviderID: "x"}}
		},
		field:   "spec.server.config.models[2].providerId",
		message: `provider "x" is not defined in spec.server.config.providers.inference; defined: ollama, vllm`,
	}, {
		name: "model provider must be an inference provider",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.Providers.Safety = []v1alpha1.Provider{{ProviderID: "guard", ProviderType: "inline::llama-guard"}}
			c.Models = []v1alpha1.Model{{ModelID: "a", ProviderID: "guard"}}
		},
		field:   "spec.server.config.models[0].providerId",
		message: `provider "guard" is not defined in spec.server.config.providers.inference; defined: ollama`,
	}, {
		name: "tool group refers to an API without providers",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.ToolGroups = []v1alpha1.ToolGroup{{ToolGroupID: "builtin::rag", ProviderID: "rag-runtime"}}
		},
		field:   "spec.server.config.toolGroups[0].providerId",
		message: `provider "rag-runtime" is not defined in spec.server.config.providers.toolRuntime; defined: none`,
	}, {
		name:    "tool group without provider",
		cfg:     func(c *v1alpha1.ServerConfig) { c.ToolGroups = []v1alpha1.ToolGroup{{ToolGroupID: "builtin::rag"}} },
		field:   "spec.server.config.toolGroups[0].providerId",
		message: "is required: the toolRuntime provider serving the group",
	}, {
		name:    "shield refers to an undefined provider",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Shields = []v1alpha1.Shield{{ShieldID: "s", ProviderID: "guard"}} },
		field:   "spec.server.config.shields[0].providerId",
		message: `provider "guard" is not defined in spec.server.config.providers.safety; defined: none`,
	}, {
		name: "vector DB refers to an undefined provider",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.Providers.VectorIO = []v1alpha1.Provider{{ProviderID: "faiss", ProviderType: "inline::faiss"}}
			c.VectorDBs = []v1alpha1.VectorDB{{VectorDBID: "d", EmbeddingModel: "e", EmbeddingDimension: 384, ProviderID: "pgvector"}}
		},
		field:   "spec.server.config.vectorDBs[0].providerId",
		message: `provider "pgvector" is not defined in spec.server.config.providers.vectorIO; defined: faiss`,
	}, {
		name: "duplicate provider id within an API",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.Providers.VectorIO = []v1alpha1.Provider{
				{ProviderID: "faiss", ProviderType: "inline::faiss"},
				{ProviderID: "faiss", ProviderType: "inline::sqlite-vec"},
			}
		},
		field:   "spec.server.config.providers.vectorIO[1].providerId",
		message: `duplicate providerId "faiss": spec.server.config.providers.vectorIO[0] has it already`,
	}, {
		name:    "missing provider type",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Providers.Agents = []v1alpha1.Provider{{ProviderID: "a"}} },
		field:   "spec.server.config.providers.agents[0].providerType",
		message: "is required, e.g. remote::vllm or inline::faiss",
	}, {
		name: "duplicate model id",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.Models = []v1alpha1.Model{{ModelID: "m"}, {ModelID: "n"}, {ModelID: "m"}}
		},
		field:   "spec.server.config.models[2].modelId",
		message: `duplicate modelId "m": spec.server.config.models[0] has it already`,
	}, {
		name:    "missing model id",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Models = []v1alpha1.Model{{ProviderID: "ollama"}} },
		field:   "spec.server.config.models[0].modelId",
		message: "is required",
	}, {
		name:    "unknown model type",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Models = []v1alpha1.Model{{ModelID: "m", ModelType: "rerank"}} },
		field:   "spec.server.config.models[0].modelType",
		message: `unknown model type "rerank"; use llm or embedding`,
	}, {
		name: "duplicate tool group id",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.ToolGroups = []v1alpha1.ToolGroup{{ToolGroupID: "t", ProviderID: "p"}, {ToolGroupID: "t", ProviderID: "p"}}
		},
		field:   "spec.server.config.toolGroups[1].toolGroupId",
		message: `duplicate toolGroupId "t": spec.server.config.toolGroups[0] has it already`,
	}, {
		name: "vector DB without dimension",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.VectorDBs = []v1alpha1.VectorDB{{VectorDBID: "d", EmbeddingModel: "e"}}
		},
		field:   "spec.server.config.vectorDBs[0].embeddingDimension",
		message: "must be at least 1, the embedding model's dimension (e.g. 384)",
	}, {
		name:    "overrides must be an object",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`["a"]`) },
		field:   "spec.server.config.overrides",
		message: "must be an object (a YAML mapping), not a list",
	}, {
		name:    "overrides must be JSON",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`{"a":`) },
		field:   "spec.server.config.overrides",
		message: "is not valid JSON: unexpected EOF",
	}, {
		name:    "overrides cannot set the port",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`{"server":{"port":9999}}`) },
		field:   "spec.server.config.overrides.server.port",
		message: "the server port is spec.server.containerSpec.port; remove it from overrides",
	}, {
		name:    "provider config must be an object",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Providers.Inference[0].Config = rawJSON(`"url"`) },
		field:   "spec.server.config.providers.inference[0].config",
		message: "must be an object (a YAML mapping), not a string",
	}, {
		name:    "model metadata must be an object",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Models = []v1alpha1.Model{{ModelID: "m", Metadata: rawJSON(`384`)}} },
		field:   "spec.server.config.models[0].metadata",
		message: "must be an object (a YAML mapping), not a number",
	}, {
		name:    "no providers at all",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Providers = nil },
		field:   "spec.server.config.providers",
		message: "define at least one provider: llama-stack requires run.yaml providers",
	}, {
		name:    "overrides remove every provider",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`{"providers":null}`) },
		field:   "spec.server.config.providers",
		message: "define at least one provider: llama-stack requires run.yaml providers",
	}, {
		name:    "store field that does not apply to the type",
		cfg:     func(c *v1alpha1.ServerConfig) { c.MetadataStore = &v1alpha1.KVStore{Type: "redis", DBPath: "/x.db"} },
		field:   "spec.server.config.metadataStore.dbPath",
		message: "applies only to type sqlite, not redis; remove it",
	}, {
		name: "store field for several types",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.InferenceStore = &v1alpha1.SQLStore{Type: "sqlite", Port: &port}
		},
		field:   "spec.server.config.inferenceStore.port",
		message: "applies only to type postgres, not sqlite; remove it",
	}, {
		name:    "unknown store type",
		cfg:     func(c *v1alpha1.ServerConfig) { c.InferenceStore = &v1alpha1.SQLStore{Type: "redis"} },
		field:   "spec.server.config.inferenceStore.type",
		message: `unknown type "redis"; use one of sqlite, postgres`,
	}, {
		name:    "postgres needs a user",
		cfg:     func(c *v1alpha1.ServerConfig) { c.MetadataStore = &v1alpha1.KVStore{Type: "postgres", Host: "pg"} },
		field:   "spec.server.config.metadataStore.user",
		message: "is required for type postgres",
	}, {
		name: "inline password",
		cfg: func(c *v1alpha1.ServerConfig) {
			c.InferenceStore = &v1alpha1.SQLStore{Type: "postgres", User: "llama", Password: "hunter2"}
		},
		field: "spec.server.config.inferenceStore.password",
		message: "must reference an environment variable, e.g. ${env.POSTGRES_PASSWORD}: set the variable in " +
			"spec.server.containerSpec.env from a Secret (valueFrom.secretKeyRef); never write the password in the CR",
	}, {
		name:    "TLS key without certificate",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Server = &v1alpha1.ServerSettings{TLSKeyFile: "/tls/tls.key"} },
		field:   "spec.server.config.server.tlsCertFile",
		message: "is required with tlsKeyFile: set both or neither",
	}, {
		name:    "TLS certificate without key",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Server = &v1alpha1.ServerSettings{TLSCertFile: "/tls/tls.crt"} },
		field:   "spec.server.config.server.tlsKeyFile",
		message: "is required with tlsCertFile: set both or neither",
	}, {
		name:    "auth must be an object",
		cfg:     func(c *v1alpha1.ServerConfig) { c.Server = &v1alpha1.ServerSettings{Auth: rawJSON(`true`)} },
		field:   "spec.server.config.server.auth",
		message: "must be an object (a YAML mapping), not a boolean",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ollama()
			tt.cfg(c)
			out, err := Render(c, defaultOpts)
			require.Nil(t, out)
			var fe *status.Failure
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			assert.Equal(t, tt.message, fe.Message)
			assert.Equal(t, tt.field+": "+tt.message, err.Error())
		})
	}
}

func TestRenderValidConfigsPass(t *testing.T) {
	// The counterparts of the error cases above: each must render.
	port := intstr.FromInt32(5432)
	tests := map[string]func(*v1alpha1.ServerConfig){
		"model without provider": func(c *v1alpha1.ServerConfig) { c.Models = []v1alpha1.Model{{ModelID: "m"}} },
		"same provider id in two APIs": func(c *v1alpha1.ServerConfig) {
			c.Providers.Agents = []v1alpha1.Provider{{ProviderID: "ollama", ProviderType: "inline::meta-reference"}}
		},
		"postgres with user and env port": func(c *v1alpha1.ServerConfig) {
			c.InferenceStore = &v1alpha1.SQLStore{Type: "postgres", User: "u", Port: &port}
		},
		"password from env": func(c *v1alpha1.ServerConfig) {
			c.MetadataStore = &v1alpha1.KVStore{Type: "mongodb", Password: "${env.MONGO_PASSWORD}"}
		},
		"TLS pair": func(c *v1alpha1.ServerConfig) {
			c.Server = &v1alpha1.ServerSettings{TLSCertFile: "/c", TLSKeyFile: "/k"}
		},
		"null overrides":              func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`null`) },
		"overrides removing the port": func(c *v1alpha1.ServerConfig) { c.Overrides = rawJSON(`{"server":{"port":null}}`) },
	}
	for name, mut := range tests {
		t.Run(name, func(t *testing.T) {
			c := ollama()
			mut(c)
			_, err := Render(c, defaultOpts)
			require.NoError(t, err)
		})
	}
}
