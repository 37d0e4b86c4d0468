package runconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// TestVersionedFields renders each field whose support changed for the last
// version without it and the first with it (or the reverse): one renders, the
// other is InvalidSpec naming the field.
func TestVersionedFields(t *testing.T) {
	p := func(typ string) []v1alpha1.Provider { return []v1alpha1.Provider{{ProviderID: "p", ProviderType: typ}} }
	tests := []struct {
		field     string
		mut       func(*v1alpha1.ServerConfig)
		ok, notOK string
		api       string // run.yaml key that must be written when ok
	}{
		{"providers.telemetry", func(c *v1alpha1.ServerConfig) { c.Providers.Telemetry = p("inline::meta-reference") }, "0.3.4", "0.4.0", "  telemetry:\n"},
		{"providers.agents", func(c *v1alpha1.ServerConfig) { c.Providers.Agents = p("inline::meta-reference") }, "0.6.1", "0.7.0", "  agents:\n"},
		{"providers.responses", func(c *v1alpha1.ServerConfig) { c.Providers.Responses = p("inline::builtin") }, "0.7.0", "0.6.1", "  responses:\n"},
		{"providers.postTraining", func(c *v1alpha1.ServerConfig) { c.Providers.PostTraining = p("inline::huggingface") }, "0.6.1", "0.7.0", "  post_training:\n"},
		{"providers.batches", func(c *v1alpha1.ServerConfig) { c.Providers.Batches = p("inline::reference") }, "0.2.17", "0.2.16", "  batches:\n"},
		{"toolGroups", func(c *v1alpha1.ServerConfig) {
			c.Providers.ToolRuntime = p("inline::rag-runtime")
			c.ToolGroups = []v1alpha1.ToolGroup{{ToolGroupID: "builtin::rag", ProviderID: "p"}}
		}, "0.6.1", "0.7.0", "  tool_groups:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			c := ollama()
			tt.mut(c)
			c.ServerVersion = tt.ok
			out, err := Render(c, defaultOpts)
			require.NoError(t, err)
			assert.Contains(t, string(out), tt.api)

			c.ServerVersion = tt.notOK
			_, err = Render(c, defaultOpts)
			var f *status.Failure
			require.ErrorAs(t, err, &f)
			assert.Equal(t, "spec.server.config."+tt.field, f.Field)
			assert.Contains(t, f.Message, "llama-stack "+tt.notOK+" (spec.server.config.serverVersion)")
		})
	}
}

// TestOverridesOfTheOtherLayout: a top-level override that the target's
// layout reads elsewhere would be ignored by the server; it is refused,
// naming where it goes.
func TestOverridesOfTheOtherLayout(t *testing.T) {
	tests := []struct {
		image, overrides, field, where string
	}{
		{imageCurrent, `{"metadata_store":{"type":"sqlite"}}`, ".overrides.metadata_store", "storage.stores.metadata"},
		{imageV3, `{"vector_dbs":[]}`, ".overrides.vector_dbs", "registered_resources.vector_stores"},
		{imageCurrent, `{"shields":[]}`, ".overrides.shields", "registered_resources.shields"},
		{imageV2, `{"storage":{"backends":{}}}`, ".overrides.storage", "metadata_store and inference_store"},
		{imageV2, `{"registered_resources":{}}`, ".overrides.registered_resources", "the top level"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			c := ollama()
			c.Overrides = rawJSON(tt.overrides)
			_, err := Render(c, Options{ImageName: "starter", Image: tt.image})
			var f *status.Failure
			require.ErrorAs(t, err, &f)
			assert.Equal(t, FieldPath+tt.field, f.Field)
			assert.Contains(t, f.Message, tt.where)
			assert.Contains(t, f.Message, "set spec.server.config.serverVersion", "the version came from the tag: say how to correct it")
		})
	}
	// The same keys in their own layout are merged.
	c := ollama()
	c.Overrides = rawJSON(`{"storage":{"stores":{"responses":{"table_name":"r","backend":"sql_default"}}}}`)
	out, err := Render(c, Options{ImageName: "starter", Image: imageCurrent})
	require.NoError(t, err)
	assert.Contains(t, string(out), "    responses:\n      table_name: r\n      backend: sql_default\n")
}

// TestStorageBackends maps each store type to its backend, kv_<type> or
// sql_<type>, with the namespace on the store reference.
func TestStorageBackends(t *testing.T) {
	port := intstr.FromInt32(6379)
	tests := []struct {
		name  string
		mut   func(*v1alpha1.ServerConfig)
		want  string
		image string
	}{{
		name:  "defaults: SQLite files where a 0.7 server puts them",
		mut:   func(*v1alpha1.ServerConfig) {},
		image: imageCurrent,
		want: `storage:
  backends:
    kv_default:
      type: kv_sqlite
      db_path: ${env.SQLITE_STORE_DIR:=~/.llama/distributions}/kvstore.db
    sql_default:
      type: sql_sqlite
      db_path: ${env.SQLITE_STORE_DIR:=~/.llama/distributions}/sql_store.db
  stores:
    metadata:
      namespace: registry
      backend: kv_default
    inference:
      table_name: inference_store
      backend: sql_default
    conversations:
      table_name: openai_conversations
      backend: sql_default
`,
	}, {
		name: "redis with a namespace; sqlite inference store without a path",
		mut: func(c *v1alpha1.ServerConfig) {
			c.MetadataStore = &v1alpha1.KVStore{Type: v1alpha1.KVStoreRedis, Namespace: "team-a", Host: "redis", Port: &port}
			c.InferenceStore = &v1alpha1.SQLStore{Type: v1alpha1.SQLStoreSQLite}
		},
		image: imageV3,
		want: `storage:
  backends:
    kv_default:
      type: kv_redis
      host: redis
      port: 6379
    sql_default:
      type: sql_sqlite
      db_path: ${env.SQLITE_STORE_DIR:=~/.llama/distributions}/sql_store.db
  stores:
    metadata:
      namespace: team-a
      backend: kv_default
`,
	}, {
		name: "mongodb",
		mut: func(c *v1alpha1.ServerConfig) {
			c.MetadataStore = &v1alpha1.KVStore{Type: v1alpha1.KVStoreMongoDB, Host: "mongo", DB: "d", User: "u",
				Password: "${env.MONGO_PASSWORD}", CollectionName: "c"}
		},
		image: imageCurrent,
		want: `storage:
  backends:
    kv_default:
      type: kv_mongodb
      host: mongo
      db: d
      user: u
      password: ${env.MONGO_PASSWORD}
      collection_name: c
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ollama()
			tt.mut(c)
			out, err := Render(c, Options{ImageName: "starter", Image: tt.image})
			require.NoError(t, err)
			assert.Contains(t, string(out), tt.want)
			assert.NotContains(t, string(out), "metadata_store")
		})
	}
}

// TestNameKey: image_name before 0.5 (required there), distro_name from 0.5
// (where image_name is deprecated).
func TestNameKey(t *testing.T) {
	for version, want := range map[string]string{
		"0.2.23": "image_name: starter\n", "0.4.5": "image_name: starter\n",
		"0.5.0": "distro_name: starter\n", "0.7.1": "distro_name: starter\n",
	} {
		c := ollama()
		c.ServerVersion = version
		out, err := Render(c, defaultOpts)
		require.NoError(t, err)
		assert.Contains(t, string(out), "\n"+want, version)
	}
}
