package configgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

const minimalBase = "version: 2\ndistro_name: starter\n"

func TestNorm(t *testing.T) {
	for in, want := range map[string]string{
		"openai-primary":          "OPENAI_PRIMARY",
		"remote-vllm":             "REMOTE_VLLM",
		"my.provider_v2":          "MY_PROVIDER_V2",
		"--a--b--":                "A_B",
		"a__b":                    "A_B",
		"a-_-b":                   "A_B",
		"1st":                     "_1ST",
		"9":                       "_9",
		"":                        "_",
		"---":                     "_",
		"Ünïcode-x":               "N_CODE_X",
		"${env.VLLM_URL:+vllm}":   "ENV_VLLM_URL_VLLM",
		"api-key":                 "API_KEY",
		"MiXeD.Case":              "MIXED_CASE",
		"tab\tand space":          "TAB_AND_SPACE",
		"_leading_and_trailing__": "LEADING_AND_TRAILING",
	} {
		assert.Equal(t, want, norm(in), "norm(%q)", in)
	}
	assert.Equal(t, "OGX_OPENAI_PRIMARY_API_KEY", envName("openai-primary", "API_KEY"))
	assert.Equal(t, "OGX__1ST_TOKEN", envName("1st", "TOKEN"))
	assert.Equal(t, "OGX___PASSWORD", envName("", "PASSWORD"))
}

func ref(name string) v1beta1.SecretKeyRef { return v1beta1.SecretKeyRef{Name: name, Key: "k"} }

// TestDefaultIDs checks the ID and provider type of each typed provider
// given without id, and that id overrides the default where there is one.
func TestDefaultIDs(t *testing.T) {
	cases := []struct {
		name      string
		providers v1beta1.ProvidersSpec
		api, id   string
		ptype     string
	}{
		{"vllm", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{VLLM: []v1beta1.VLLMProvider{{Endpoint: "http://v"}}}}}, "inference", "remote-vllm", "remote::vllm"},
		{"openai", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{OpenAI: []v1beta1.OpenAIProvider{{APIKey: ref("o")}}}}}, "inference", "remote-openai", "remote::openai"},
		{"azure", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{Azure: []v1beta1.AzureProvider{{Endpoint: "http://a", APIKey: ref("a")}}}}}, "inference", "remote-azure", "remote::azure"},
		{"bedrock", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{Bedrock: []v1beta1.BedrockProvider{{Region: "r"}}}}}, "inference", "remote-bedrock", "remote::bedrock"},
		{"vertexai", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{VertexAI: []v1beta1.VertexAIProvider{{Project: "p"}}}}}, "inference", "remote-vertexai", "remote::vertexai"},
		{"watsonx", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{Watsonx: []v1beta1.WatsonxProvider{{APIKey: ref("w")}}}}}, "inference", "remote-watsonx", "remote::watsonx"},
		{"inference custom", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Inline: &v1beta1.InferenceInlineProviders{Custom: []v1beta1.CustomProvider{{Type: "inline::sentence-transformers"}}}}}, "inference", "inline-sentence-transformers", "inline::sentence-transformers"},
		{"pgvector", v1beta1.ProvidersSpec{VectorIo: &v1beta1.VectorIOProvidersSpec{Remote: &v1beta1.VectorIORemoteProviders{Pgvector: []v1beta1.PgvectorProvider{{Password: ref("p")}}}}}, "vector_io", "remote-pgvector", "remote::pgvector"},
		{"milvus", v1beta1.ProvidersSpec{VectorIo: &v1beta1.VectorIOProvidersSpec{Remote: &v1beta1.VectorIORemoteProviders{Milvus: []v1beta1.MilvusProvider{{URI: "u"}}}}}, "vector_io", "remote-milvus", "remote::milvus"},
		{"qdrant", v1beta1.ProvidersSpec{VectorIo: &v1beta1.VectorIOProvidersSpec{Remote: &v1beta1.VectorIORemoteProviders{Qdrant: []v1beta1.QdrantProvider{{URL: "u"}}}}}, "vector_io", "remote-qdrant", "remote::qdrant"},
		{"braveSearch", v1beta1.ProvidersSpec{ToolRuntime: &v1beta1.ToolRuntimeProvidersSpec{Remote: &v1beta1.ToolRuntimeRemoteProviders{BraveSearch: []v1beta1.BraveSearchProvider{{APIKey: ref("b")}}}}}, "tool_runtime", "remote-brave-search", "remote::brave-search"},
		{"tavilySearch", v1beta1.ProvidersSpec{ToolRuntime: &v1beta1.ToolRuntimeProvidersSpec{Remote: &v1beta1.ToolRuntimeRemoteProviders{TavilySearch: []v1beta1.TavilySearchProvider{{APIKey: ref("t")}}}}}, "tool_runtime", "remote-tavily-search", "remote::tavily-search"},
		{"modelContextProtocol", v1beta1.ProvidersSpec{ToolRuntime: &v1beta1.ToolRuntimeProvidersSpec{Remote: &v1beta1.ToolRuntimeRemoteProviders{ModelContextProtocol: []v1beta1.ModelContextProtocolProvider{{}}}}}, "tool_runtime", "remote-model-context-protocol", "remote::model-context-protocol"},
		{"fileSearch", v1beta1.ProvidersSpec{ToolRuntime: &v1beta1.ToolRuntimeProvidersSpec{Inline: &v1beta1.ToolRuntimeInlineProviders{FileSearch: []v1beta1.InlineFileSearchProvider{{}}}}}, "tool_runtime", "inline-file-search", "inline::file-search"},
		{"s3", v1beta1.ProvidersSpec{Files: &v1beta1.FilesProvidersSpec{Remote: &v1beta1.FilesRemoteProviders{S3: &v1beta1.S3Provider{BucketName: "b"}}}}, "files", "remote-s3", "remote::s3"},
		{"localfs", v1beta1.ProvidersSpec{Files: &v1beta1.FilesProvidersSpec{Inline: &v1beta1.FilesInlineProviders{LocalFS: &v1beta1.InlineLocalFSProvider{}}}}, "files", "inline-localfs", "inline::localfs"},
		{"reference", v1beta1.ProvidersSpec{Batches: &v1beta1.BatchesProvidersSpec{Inline: &v1beta1.BatchesInlineProviders{Reference: &v1beta1.InlineReferenceProvider{}}}}, "batches", "inline-reference", "inline::reference"},
		{"builtin", v1beta1.ProvidersSpec{Responses: &v1beta1.ResponsesProvidersSpec{Inline: &v1beta1.ResponsesInlineProviders{Builtin: &v1beta1.InlineBuiltinResponsesProvider{}}}}, "responses", "inline-builtin", "inline::builtin"},
		{"doclingServe", v1beta1.ProvidersSpec{FileProcessors: &v1beta1.FileProcessorsProvidersSpec{Remote: &v1beta1.FileProcessorsRemoteProviders{DoclingServe: &v1beta1.DoclingServeProvider{BaseURL: "u"}}}}, "file_processors", "remote-docling-serve", "remote::docling-serve"},
		{"pypdf", v1beta1.ProvidersSpec{FileProcessors: &v1beta1.FileProcessorsProvidersSpec{Inline: &v1beta1.FileProcessorsInlineProviders{PyPDF: &v1beta1.InlinePyPDFFileProcessorProvider{}}}}, "file_processors", "inline-pypdf", "inline::pypdf"},
		{"docling", v1beta1.ProvidersSpec{FileProcessors: &v1beta1.FileProcessorsProvidersSpec{Inline: &v1beta1.FileProcessorsInlineProviders{Docling: &v1beta1.InlineDoclingFileProcessorProvider{}}}}, "file_processors", "inline-docling", "inline::docling"},
		{"custom remote", v1beta1.ProvidersSpec{Batches: &v1beta1.BatchesProvidersSpec{Remote: &v1beta1.BatchesRemoteProviders{Custom: []v1beta1.CustomProvider{{Type: "remote::my::batches"}}}}}, "batches", "remote-my-batches", "remote::my::batches"},
		{"custom with id", v1beta1.ProvidersSpec{Responses: &v1beta1.ResponsesProvidersSpec{Remote: &v1beta1.ResponsesRemoteProviders{Custom: []v1beta1.CustomProvider{{RoutedProviderBase: v1beta1.RoutedProviderBase{ID: "mine"}, Type: "remote::x"}}}}}, "responses", "mine", "remote::x"},
		{"vllm with id", v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{VLLM: []v1beta1.VLLMProvider{{RoutedProviderBase: v1beta1.RoutedProviderBase{ID: "gpu"}, Endpoint: "http://v"}}}}}, "inference", "gpu", "remote::vllm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &generator{spec: &v1beta1.OGXServerSpec{Providers: &c.providers}}
			set, err := g.expandProviders()
			require.NoError(t, err)
			require.Len(t, set, 1)
			require.Len(t, set[c.api], 1)
			assert.Equal(t, c.id, set[c.api][0].id)
			assert.Equal(t, c.ptype, set[c.api][0].ptype)
		})
	}
}

func TestActive(t *testing.T) {
	cm := &v1beta1.ConfigMapKeyRef{Name: "c", Key: "k"}
	assert.False(t, Active(nil))
	assert.False(t, Active(&v1beta1.OGXServerSpec{}))
	assert.False(t, Active(&v1beta1.OGXServerSpec{BaseConfig: cm}), "baseConfig alone does not generate")
	assert.False(t, Active(&v1beta1.OGXServerSpec{DisabledAPIs: []string{}}))
	assert.True(t, Active(&v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{}}))
	assert.True(t, Active(&v1beta1.OGXServerSpec{Resources: &v1beta1.ResourcesSpec{}}))
	assert.True(t, Active(&v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{}}))
	assert.True(t, Active(&v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}))
	assert.False(t, Active(&v1beta1.OGXServerSpec{OverrideConfig: cm, DisabledAPIs: []string{"files"}}))
}

func TestConfigMapName(t *testing.T) {
	// sha256("") starts e3b0c44298fc1c14.
	assert.Equal(t, "demo-config-e3b0c44298fc1c14", ConfigMapName("demo", nil))
	assert.NotEqual(t, ConfigMapName("demo", []byte("a")), ConfigMapName("demo", []byte("b")))
	long := strings.Repeat("a", 228) + ".-b" + strings.Repeat("c", 22)
	name := ConfigMapName(long, nil)
	assert.Len(t, name, 252, "cut at 229 characters, then the trailing '.-' removed")
	assert.Equal(t, strings.Repeat("a", 228)+"-config-e3b0c44298fc1c14", name)
	assert.Len(t, ConfigMapName(strings.Repeat("x", 253), nil), 253)
}

func TestRedisEndpoint(t *testing.T) {
	ok := map[string]struct {
		host string
		port int
	}{
		"redis://redis:6380":      {"redis", 6380},
		"redis://redis":           {"redis", 6379},
		"REDIS://redis/":          {"redis", 6379},
		"redis://redis:6379/0":    {"redis", 6379},
		"redis.ns.svc:7000":       {"redis.ns.svc", 7000},
		"redis.ns.svc":            {"redis.ns.svc", 6379},
		"redis://[fd00::1]:6379":  {"[fd00::1]", 6379},
		"  redis://spaced:1234  ": {"spaced", 1234},
	}
	for in, want := range ok {
		host, port, err := redisEndpoint(in)
		require.NoError(t, err, in)
		assert.Equal(t, want.host, host, in)
		assert.Equal(t, want.port, port, in)
	}
	for _, in := range []string{"", "rediss://redis:6379", "http://redis", "redis://user:pw@redis", "redis://redis/2",
		"redis://redis?timeout=1", "redis://:6379", "redis://redis:0", "redis://redis:99999", "redis://redis:abc"} {
		_, _, err := redisEndpoint(in)
		var f *status.Failure
		require.True(t, errors.As(err, &f), "%q: %v", in, err)
		assert.Equal(t, "spec.storage.kv.endpoint", f.Field, in)
	}
}

func TestTemplateMatches(t *testing.T) {
	for _, c := range []struct {
		template, s string
		want        bool
	}{
		{"${env.VLLM_URL:+vllm}", "vllm", true},
		{"${env.VLLM_URL:+vllm}", "", true},
		{"${env.VLLM_URL:+vllm}", "vllm2", false},
		{"${env.VLLM_URL:+vllm}", "other", false},
		{"${env.PROVIDER:=vllm}", "anything", true},
		{"${env.PROVIDER}", "anything", true},
		{"pre-${env.X:+mid}-post", "pre--post", true},
		{"pre-${env.X:+mid}-post", "pre-mid-post", true},
		{"pre-${env.X:+mid}-post", "pre-other-post", false},
		{"a.b${env.X:+c}", "axb", false},
	} {
		assert.Equal(t, c.want, templateMatches(c.template, c.s), "%q ~ %q", c.template, c.s)
	}
}

func TestFormatFloat(t *testing.T) {
	for f, want := range map[float64]string{
		60: "60.0", 0.5: "0.5", 1e6: "1.0e+06", 1.5e-7: "1.5e-07", -2: "-2.0", 123456: "123456.0", 1.25e21: "1.25e+21",
	} {
		assert.Equal(t, want, formatFloat(f))
	}
}

func TestParseBaseErrors(t *testing.T) {
	for name, base := range map[string]string{
		"empty":          "",
		"blank":          "  \n",
		"not YAML":       "version: [",
		"list":           "- version: 2\n",
		"scalar":         "2\n",
		"no version":     "distro_name: x\n",
		"null version":   "version: null\n",
		"empty version":  "version: ''\n",
		"map version":    "version: {a: 1}\n",
		"duplicate keys": "version: 2\nversion: 3\n",
		"nested dup":     "version: 2\nserver: {port: 1, port: 2}\n",
		"bad providers":  "version: 2\nproviders: [a]\n",
		"bad apis":       "version: 2\napis: inference\n",
		"bad server":     "version: 2\nserver: [1]\n",
		"bad rr":         "version: 2\nregistered_resources: 1\n",
		"bad api list":   "version: 2\nproviders: {inference: {a: 1}}\n",
	} {
		_, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}, Base: []byte(base), DistroName: "d"})
		var f *status.Failure
		require.True(t, errors.As(err, &f), "%s: %v", name, err)
		assert.Equal(t, "spec.baseConfig", f.Field, name)
	}
}

func TestVersion(t *testing.T) {
	for base, want := range map[string]int{
		"version: 2\n":     2,
		"version: '3'\n":   3,
		"version: v2\n":    defaultConfigVersion,
		"version: 2.0\n":   defaultConfigVersion,
		"version: \"7\"\n": 7,
	} {
		out, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}, Base: []byte(base), DistroName: "d"})
		require.NoError(t, err, base)
		assert.Equal(t, want, out.ConfigVersion, base)
	}
	_, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}, Base: []byte("version: 2\n")})
	var f *status.Failure
	require.True(t, errors.As(err, &f), "no distro name anywhere: %v", err)
	assert.Equal(t, "spec.distribution", f.Field)
	out, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}, Base: []byte("version: 2\nimage_name: legacy\n")})
	require.NoError(t, err)
	assert.Contains(t, string(out.Config), "distro_name: legacy\n")
	assert.NotContains(t, string(out.Config), "image_name")
}

// TestSettingsNumbers checks that integers of custom settings stay
// integers and floats stay floats (JSON as the API server stores it).
func TestSettingsNumbers(t *testing.T) {
	spec := &v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{
		Remote: &v1beta1.InferenceRemoteProviders{Custom: []v1beta1.CustomProvider{{
			Type:     "remote::x",
			Settings: &apiextensionsv1.JSON{Raw: []byte(`{"f":60.0,"e":1e6,"i":7,"neg":-3,"big":12345678901234567890,"l":[1,0.5]}`)},
		}}},
	}}}
	out, err := Generate(Input{Spec: spec, Base: []byte(minimalBase), DistroName: "d"})
	require.NoError(t, err)
	cfg := string(out.Config)
	for _, want := range []string{"f: 60.0\n", "e: 1.0e+06\n", "i: 7\n", "neg: -3\n", "big: 1.2345678901234567e+19\n", "- 1\n", "- 0.5\n"} {
		assert.Contains(t, cfg, want)
	}
}

// TestErrors checks failures that have no golden case: the field named.
func TestErrors(t *testing.T) {
	custom := func(c v1beta1.CustomProvider) *v1beta1.ProvidersSpec {
		return &v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{Custom: []v1beta1.CustomProvider{c}}}}
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name  string
		spec  v1beta1.OGXServerSpec
		base  string
		field string
	}{
		{"nil spec", v1beta1.OGXServerSpec{}, "", "spec.baseConfig"},
		{"providers of a disabled API", v1beta1.OGXServerSpec{DisabledAPIs: []string{"inference"}, Providers: custom(v1beta1.CustomProvider{Type: "remote::x"})}, minimalBase, "spec.providers.inference"},
		{"custom type without prefix", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "gemini"})}, minimalBase, "spec.providers.inference.remote.custom[0].type"},
		{"settings not an object", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "remote::x", Settings: &apiextensionsv1.JSON{Raw: []byte(`[1]`)}})}, minimalBase, "spec.providers.inference.remote.custom[0].settings"},
		{"settings not JSON", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "remote::x", Settings: &apiextensionsv1.JSON{Raw: []byte(`{"a":1} x`)}})}, minimalBase, "spec.providers.inference.remote.custom[0].settings"},
		{"settings number out of range", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "remote::x", Settings: &apiextensionsv1.JSON{Raw: []byte(`{"a":1e999}`)}})}, minimalBase, "spec.providers.inference.remote.custom[0].settings"},
		{"proxy url and http", v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{
			OpenAI: []v1beta1.OpenAIProvider{{APIKey: ref("o"), RemoteInferenceCommonConfig: v1beta1.RemoteInferenceCommonConfig{
				Network: &v1beta1.NetworkConfig{Proxy: &v1beta1.ProxyConfig{URL: str("http://p"), HTTP: str("http://q")}}}}}}}}}, minimalBase, "spec.providers.inference.remote.openai[0].network.proxy"},
		{"markitdown", v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{FileProcessors: &v1beta1.FileProcessorsProvidersSpec{Inline: &v1beta1.FileProcessorsInlineProviders{
			MarkItDown: &v1beta1.InlineMarkItDownFileProcessorProvider{}}}}}, minimalBase, "spec.providers.fileProcessors.inline.markitdown"},
		{"hnsw and ivfFlat", v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{VectorIo: &v1beta1.VectorIOProvidersSpec{Remote: &v1beta1.VectorIORemoteProviders{
			Pgvector: []v1beta1.PgvectorProvider{{Password: ref("p"), VectorIndex: &v1beta1.VectorIndexConfig{HNSW: &v1beta1.HNSWConfig{}, IVFFlat: &v1beta1.IVFFlatConfig{}}}}}}}}, minimalBase, "spec.providers.vectorIo.remote.pgvector[0].vectorIndex"},
		{"duplicate singleton", v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{
			Inference: &v1beta1.InferenceProvidersSpec{Inline: &v1beta1.InferenceInlineProviders{Custom: []v1beta1.CustomProvider{{Type: "remote::s3"}}}},
			Files:     &v1beta1.FilesProvidersSpec{Remote: &v1beta1.FilesRemoteProviders{S3: &v1beta1.S3Provider{BucketName: "b"}}}}}, minimalBase, "spec.providers.files.remote.s3"},
		{"model type", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "remote::x"}), Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{Name: "m", ModelType: "chat"}}}}, minimalBase, "spec.resources.models[0].modelType"},
		{"model without name", v1beta1.OGXServerSpec{Providers: custom(v1beta1.CustomProvider{Type: "remote::x"}), Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{}}}}, minimalBase, "spec.resources.models[0].name"},
		{"model without inference", v1beta1.OGXServerSpec{Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{Name: "m"}}}}, minimalBase, "spec.resources.models[0].provider"},
		{"model named provider without inference", v1beta1.OGXServerSpec{Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{Name: "m", Provider: "p"}}}}, minimalBase, "spec.resources.models[0].provider"},
		{"model with only templated providers", v1beta1.OGXServerSpec{Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{Name: "m"}}}},
			minimalBase + "providers:\n  inference:\n  - provider_id: ${env.X:+x}\n    provider_type: remote::x\n", "spec.resources.models[0].provider"},
		{"model of disabled inference", v1beta1.OGXServerSpec{DisabledAPIs: []string{"inference"}, Resources: &v1beta1.ResourcesSpec{Models: []v1beta1.ModelConfig{{Name: "m"}}}},
			minimalBase + "providers:\n  inference:\n  - provider_id: x\n    provider_type: remote::x\n", "spec.resources.models[0].provider"},
		{"kv sqlite with endpoint", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{KV: &v1beta1.KVStorageSpec{Endpoint: "redis:1"}}}, minimalBase, "spec.storage.kv.endpoint"},
		{"kv sqlite with password", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{KV: &v1beta1.KVStorageSpec{Type: "sqlite", Password: &v1beta1.SecretKeyRef{Name: "a", Key: "b"}}}}, minimalBase, "spec.storage.kv.password"},
		{"kv type", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{KV: &v1beta1.KVStorageSpec{Type: "memcached"}}}, minimalBase, "spec.storage.kv.type"},
		{"sql type", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{SQL: &v1beta1.SQLStorageSpec{Type: "mysql"}}}, minimalBase, "spec.storage.sql.type"},
		{"sql sqlite with connection string", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{SQL: &v1beta1.SQLStorageSpec{ConnectionString: &v1beta1.SecretKeyRef{Name: "a", Key: "b"}}}}, minimalBase, "spec.storage.sql.connectionString"},
		{"base storage not a map", v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{}}, minimalBase + "storage: 1\n", "spec.baseConfig"},
		{"base lacks kv_default", v1beta1.OGXServerSpec{Providers: &v1beta1.ProvidersSpec{Batches: &v1beta1.BatchesProvidersSpec{Inline: &v1beta1.BatchesInlineProviders{Reference: &v1beta1.InlineReferenceProvider{}}}}},
			minimalBase + "storage:\n  backends:\n    sql_default: {type: sql_sqlite, db_path: /x}\n", "spec.baseConfig"},
		{"port above range", v1beta1.OGXServerSpec{Network: &v1beta1.NetworkSpec{Port: 70000}, DisabledAPIs: []string{"files"}}, minimalBase, "spec.network.port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := &c.spec
			if c.name == "nil spec" {
				spec = nil
			}
			_, err := Generate(Input{Spec: spec, Base: []byte(c.base), DistroName: "d"})
			var f *status.Failure
			require.True(t, errors.As(err, &f), "want a *status.Failure, got %v", err)
			if c.name == "nil spec" {
				assert.Equal(t, "spec", f.Field)
				return
			}
			assert.Equal(t, c.field, f.Field)
			assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
		})
	}
}

// TestBaseBackendsPresent checks that a base defining kv_default and
// sql_default passes the check of checkBaseBackends, and that the spec's
// storage makes the base's backends irrelevant.
func TestBaseBackendsPresent(t *testing.T) {
	providers := &v1beta1.ProvidersSpec{Batches: &v1beta1.BatchesProvidersSpec{Inline: &v1beta1.BatchesInlineProviders{Reference: &v1beta1.InlineReferenceProvider{}}}}
	_, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{Providers: providers}, DistroName: "d",
		Base: []byte(minimalBase + "storage:\n  backends:\n    kv_default: {type: kv_sqlite, db_path: /x}\n")})
	require.NoError(t, err)
	out, err := Generate(Input{Spec: &v1beta1.OGXServerSpec{Providers: providers, Storage: &v1beta1.StateStorageSpec{}}, DistroName: "d",
		Base: []byte(minimalBase + "storage:\n  backends:\n    sql_default: {type: sql_sqlite, db_path: /x}\n")})
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(out.Config, &cfg))
	backends := cfg["storage"].(map[string]any)["backends"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "kv_sqlite", "db_path": sqliteKVPath}, backends["kv_default"])
	assert.Equal(t, map[string]any{"type": "sql_sqlite", "db_path": sqliteSQLPath}, backends["sql_default"])
}

func TestServerTLS(t *testing.T) {
	spec := &v1beta1.OGXServerSpec{DisabledAPIs: []string{"files"}}
	base := []byte(minimalBase + "server:\n  port: 9000\n  tls_certfile: /old.crt\n  auth: {}\n")
	out, err := Generate(Input{Spec: spec, Base: base, DistroName: "d", ServerTLS: &ServerTLS{CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key"}})
	require.NoError(t, err)
	assert.Contains(t, string(out.Config), "server:\n  auth: {}\n  port: 9000\n  tls_certfile: /tls/tls.crt\n  tls_keyfile: /tls/tls.key\n")
	out, err = Generate(Input{Spec: spec, Base: base, DistroName: "d"})
	require.NoError(t, err)
	assert.Contains(t, string(out.Config), "tls_certfile: /old.crt\n")
	assert.NotContains(t, string(out.Config), "tls_keyfile")
}
