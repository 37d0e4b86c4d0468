package configgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// apiOrder is the order of the typed API groups of spec.providers.
var apiOrder = []string{"inference", "vector_io", "tool_runtime", "files", "batches", "responses", "file_processors"}

// apiField is the spec.providers field of each API.
var apiField = map[string]string{
	"inference":       "inference",
	"vector_io":       "vectorIo",
	"tool_runtime":    "toolRuntime",
	"files":           "files",
	"batches":         "batches",
	"responses":       "responses",
	"file_processors": "fileProcessors",
}

// Storage backends the generated configs of typed providers refer to;
// storage.backends defines them (the server's defaults name them so too).
const (
	kvBackend  = "kv_default"
	sqlBackend = "sql_default"
)

// provider is one provider expanded from spec.providers.
type provider struct {
	// path is the CR path of the entry (spec.providers.files.remote.s3).
	path string
	// routed is true when the entry has an id field.
	routed bool
	id     string
	ptype  string
	config map[string]any
	// backends are the storage backends config refers to.
	backends []string
}

// yaml is the provider's entry in providers.<api>.
func (p provider) yaml() map[string]any {
	return map[string]any{"provider_id": p.id, "provider_type": p.ptype, "config": p.config}
}

// providerSet holds the expanded providers by API.
type providerSet map[string][]provider

// mergedProviders holds the providers section of the config by API: the
// base's entries as read, the spec's as built.
type mergedProviders map[string][]any

func (m mergedProviders) yaml() map[string]any {
	out := make(map[string]any, len(m))
	for api, list := range m {
		out[api] = list
	}
	return out
}

func (m mergedProviders) count() int {
	n := 0
	for _, list := range m {
		n += len(list)
	}
	return n
}

// mergeProviders replaces the base's providers of each API the spec has
// providers for, and drops the providers of the disabled APIs.
func mergeProviders(base map[string]any, user providerSet, disabled []string) (mergedProviders, error) {
	merged := mergedProviders{}
	if v, ok := base["providers"]; ok && v != nil {
		m, ok := asMap(v)
		if !ok {
			return nil, baseInvalid("providers is a %s, not a map", kindOf(v))
		}
		for api, v := range m {
			if v == nil {
				merged[api] = nil
				continue
			}
			list, ok := v.([]any)
			if !ok {
				return nil, baseInvalid("providers.%s is a %s, not a list", api, kindOf(v))
			}
			merged[api] = list
		}
	}
	for _, api := range apiOrder {
		list := user[api]
		if len(list) == 0 {
			continue
		}
		if slices.Contains(disabled, api) {
			return nil, status.Invalid("spec.providers."+apiField[api],
				"%s is also in spec.disabledAPIs: remove the providers or re-enable the API", api)
		}
		entries := make([]any, len(list))
		for i, p := range list {
			entries[i] = p.yaml()
		}
		merged[api] = entries
	}
	for _, api := range disabled {
		delete(merged, api)
	}
	return merged, nil
}

// checkDuplicateIDs refuses two providers of the spec with the same ID, in
// any APIs.
func checkDuplicateIDs(user providerSet) error {
	seen := map[string]string{}
	for _, api := range apiOrder {
		for _, p := range user[api] {
			if first, ok := seen[p.id]; ok {
				field, fix := p.path, "keep only one of them"
				if p.routed {
					field, fix = p.path+".id", "set a distinct id"
				}
				return status.Invalid(field, "provider ID %q is also the ID of %s; provider IDs must be unique across all APIs in spec.providers: %s", p.id, first, fix)
			}
			seen[p.id] = p.path
		}
	}
	return nil
}

// expandProviders expands spec.providers, API by API: remote typed
// providers, remote custom, inline typed, inline custom, each in list order.
func (g *generator) expandProviders() (providerSet, error) {
	ps := g.spec.Providers
	set := providerSet{}
	if ps == nil {
		return set, nil
	}
	steps := []struct {
		api    string
		expand func() ([]provider, error)
	}{
		{"inference", func() ([]provider, error) { return g.inference(ps.Inference) }},
		{"vector_io", func() ([]provider, error) { return g.vectorIO(ps.VectorIo) }},
		{"tool_runtime", func() ([]provider, error) { return g.toolRuntime(ps.ToolRuntime) }},
		{"files", func() ([]provider, error) { return g.files(ps.Files) }},
		{"batches", func() ([]provider, error) { return g.batches(ps.Batches) }},
		{"responses", func() ([]provider, error) { return g.responses(ps.Responses) }},
		{"file_processors", func() ([]provider, error) { return g.fileProcessors(ps.FileProcessors) }},
	}
	for _, s := range steps {
		list, err := s.expand()
		if err != nil {
			return nil, err
		}
		if len(list) > 0 {
			set[s.api] = list
		}
	}
	return set, nil
}

// each expands the entries of a list of providers at path.
func each[T any](g *generator, out *[]provider, items []T, path string, expand func(*generator, T, string) (provider, error)) error {
	for i, item := range items {
		p, err := expand(g, item, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return err
		}
		*out = append(*out, p)
	}
	return nil
}

// one expands a provider that appears at most once.
func one[T any](g *generator, out *[]provider, item *T, path string, expand func(*generator, T, string) (provider, error)) error {
	if item == nil {
		return nil
	}
	p, err := expand(g, *item, path)
	if err != nil {
		return err
	}
	*out = append(*out, p)
	return nil
}

func (g *generator) inference(s *v1beta1.InferenceProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.inference"
	var out []provider
	if r := s.Remote; r != nil {
		if err := errors.Join(
			each(g, &out, r.VLLM, path+".remote.vllm", (*generator).vllm),
			each(g, &out, r.OpenAI, path+".remote.openai", (*generator).openai),
			each(g, &out, r.Azure, path+".remote.azure", (*generator).azure),
			each(g, &out, r.Bedrock, path+".remote.bedrock", (*generator).bedrock),
			each(g, &out, r.VertexAI, path+".remote.vertexai", (*generator).vertexAI),
			each(g, &out, r.Watsonx, path+".remote.watsonx", (*generator).watsonx),
			each(g, &out, r.Custom, path+".remote.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	if in := s.Inline; in != nil {
		if err := each(g, &out, in.Custom, path+".inline.custom", (*generator).custom); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (g *generator) vectorIO(s *v1beta1.VectorIOProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.vectorIo"
	var out []provider
	if r := s.Remote; r != nil {
		if err := errors.Join(
			each(g, &out, r.Pgvector, path+".remote.pgvector", (*generator).pgvector),
			each(g, &out, r.Milvus, path+".remote.milvus", (*generator).milvus),
			each(g, &out, r.Qdrant, path+".remote.qdrant", (*generator).qdrant),
			each(g, &out, r.Custom, path+".remote.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	if in := s.Inline; in != nil {
		if err := each(g, &out, in.Custom, path+".inline.custom", (*generator).custom); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (g *generator) toolRuntime(s *v1beta1.ToolRuntimeProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.toolRuntime"
	var out []provider
	if r := s.Remote; r != nil {
		if err := errors.Join(
			each(g, &out, r.BraveSearch, path+".remote.braveSearch", (*generator).braveSearch),
			each(g, &out, r.TavilySearch, path+".remote.tavilySearch", (*generator).tavilySearch),
			each(g, &out, r.ModelContextProtocol, path+".remote.modelContextProtocol", (*generator).mcp),
			each(g, &out, r.Custom, path+".remote.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	if in := s.Inline; in != nil {
		if err := errors.Join(
			each(g, &out, in.FileSearch, path+".inline.fileSearch", (*generator).fileSearch),
			each(g, &out, in.Custom, path+".inline.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	return out, nil
}

func (g *generator) files(s *v1beta1.FilesProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.files"
	var out []provider
	if r := s.Remote; r != nil {
		if err := errors.Join(
			one(g, &out, r.S3, path+".remote.s3", (*generator).s3),
			each(g, &out, r.Custom, path+".remote.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	if in := s.Inline; in != nil {
		if err := errors.Join(
			one(g, &out, in.LocalFS, path+".inline.localfs", (*generator).localFS),
			each(g, &out, in.Custom, path+".inline.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	return out, nil
}

func (g *generator) batches(s *v1beta1.BatchesProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.batches"
	var out []provider
	if r := s.Remote; r != nil {
		if err := each(g, &out, r.Custom, path+".remote.custom", (*generator).custom); err != nil {
			return nil, err
		}
	}
	if in := s.Inline; in != nil {
		if err := errors.Join(
			one(g, &out, in.Reference, path+".inline.reference", (*generator).reference),
			each(g, &out, in.Custom, path+".inline.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	return out, nil
}

func (g *generator) responses(s *v1beta1.ResponsesProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.responses"
	var out []provider
	if r := s.Remote; r != nil {
		if err := each(g, &out, r.Custom, path+".remote.custom", (*generator).custom); err != nil {
			return nil, err
		}
	}
	if in := s.Inline; in != nil {
		if err := errors.Join(
			one(g, &out, in.Builtin, path+".inline.builtin", (*generator).builtinResponses),
			each(g, &out, in.Custom, path+".inline.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	return out, nil
}

func (g *generator) fileProcessors(s *v1beta1.FileProcessorsProvidersSpec) ([]provider, error) {
	if s == nil {
		return nil, nil
	}
	const path = "spec.providers.fileProcessors"
	var out []provider
	if r := s.Remote; r != nil {
		if err := errors.Join(
			one(g, &out, r.DoclingServe, path+".remote.doclingServe", (*generator).doclingServe),
			each(g, &out, r.Custom, path+".remote.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	if in := s.Inline; in != nil {
		if in.Auto != nil {
			return nil, unknownToServer(path+".inline.auto", "inline::auto")
		}
		if in.MarkItDown != nil {
			return nil, unknownToServer(path+".inline.markitdown", "inline::markitdown")
		}
		if err := errors.Join(
			one(g, &out, in.PyPDF, path+".inline.pypdf", (*generator).pypdf),
			one(g, &out, in.Docling, path+".inline.docling", (*generator).docling),
			each(g, &out, in.Custom, path+".inline.custom", (*generator).custom),
		); err != nil {
			return nil, firstErr(err)
		}
	}
	return out, nil
}

// firstErr returns the first error of an errors.Join (the steps run in
// order, so that is the first failing entry).
func firstErr(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
	}
	return err
}

// unknownToServer is the failure of a typed provider whose provider type
// the OGX server does not have.
func unknownToServer(field, ptype string) error {
	return status.Invalid(field,
		"the OGX server has no %s file processor, so it would not start: remove it and use pypdf, docling or doclingServe (or a custom provider of a type the server has)", ptype)
}

// cfg is a provider config being built; its setters skip unset values.
type cfg map[string]any

func (c cfg) str(key, v string) {
	if v != "" {
		c[key] = v
	}
}

func (c cfg) strPtr(key string, v *string) {
	if v != nil {
		c[key] = *v
	}
}

func (c cfg) int(key string, v *int) {
	if v != nil {
		c[key] = *v
	}
}

func (c cfg) bool(key string, v *bool) {
	if v != nil {
		c[key] = *v
	}
}

func (c cfg) strs(key string, v []string) {
	if len(v) > 0 {
		c[key] = slices.Clone(v)
	}
}

func (c cfg) sub(key string, m cfg) {
	if len(m) > 0 {
		c[key] = map[string]any(m)
	}
}

// secretPtr sets key to the variable of an optional Secret reference.
func (g *generator) secretPtr(c cfg, key, id, field string, ref *v1beta1.SecretKeyRef, path string) {
	if ref != nil {
		c[key] = g.secret(id, field, *ref, path)
	}
}

// storeRef is a reference to a storage backend, with a namespace (KV) or a
// table (SQL).
func storeRef(backend, what, name string) map[string]any {
	return map[string]any{"backend": backend, what: name}
}

func (g *generator) remoteCommon(c cfg, common v1beta1.RemoteInferenceCommonConfig, path string) error {
	c.bool("refresh_models", common.RefreshModels)
	c.strs("allowed_models", common.AllowedModels)
	n := common.Network
	if n == nil {
		return nil
	}
	net := cfg{}
	if t := n.TLS; t != nil {
		tls := cfg{}
		tls.bool("verify", t.Verify)
		tls.str("min_version", t.MinVersion)
		tls.strs("ciphers", t.Ciphers)
		net.sub("tls", tls)
	}
	if t := n.Timeout; t != nil {
		timeout := cfg{}
		timeout.int("connect", t.Connect)
		timeout.int("read", t.Read)
		net.sub("timeout", timeout)
	}
	if len(n.Headers) > 0 {
		headers := make(map[string]any, len(n.Headers))
		for k, v := range n.Headers {
			headers[k] = v
		}
		net["headers"] = headers
	}
	if p := n.Proxy; p != nil {
		if p.URL != nil && (p.HTTP != nil || p.HTTPS != nil) {
			return status.Invalid(path+".network.proxy",
				"url and http/https are both set, which the OGX server refuses: use url alone or http/https alone")
		}
		proxy := cfg{}
		proxy.strPtr("url", p.URL)
		proxy.strPtr("http", p.HTTP)
		proxy.strPtr("https", p.HTTPS)
		proxy.strPtr("cacert", p.CACert)
		proxy.strs("no_proxy", p.NoProxy)
		net.sub("proxy", proxy)
	}
	c.sub("network", net)
	return nil
}

func (g *generator) vllm(p v1beta1.VLLMProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"base_url": p.Endpoint}
	c.int("max_tokens", p.MaxTokens)
	g.secretPtr(c, "api_token", id, "API_TOKEN", p.APIToken, path+".apiToken")
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: id, ptype: "remote::vllm", config: c}, nil
}

func (g *generator) openai(p v1beta1.OpenAIProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"api_key": g.secret(id, "API_KEY", p.APIKey, path+".apiKey")}
	c.str("base_url", p.Endpoint)
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: id, ptype: "remote::openai", config: c}, nil
}

func (g *generator) azure(p v1beta1.AzureProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"base_url": p.Endpoint, "api_key": g.secret(id, "API_KEY", p.APIKey, path+".apiKey")}
	c.str("api_version", p.APIVersion)
	c.str("api_type", p.APIType)
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: id, ptype: "remote::azure", config: c}, nil
}

func (g *generator) bedrock(p v1beta1.BedrockProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"region_name": p.Region}
	g.secretPtr(c, "api_key", id, "API_KEY", p.APIKey, path+".apiKey")
	g.secretPtr(c, "aws_access_key_id", id, "AWS_ACCESS_KEY_ID", p.AWSAccessKeyID, path+".awsAccessKeyId")
	g.secretPtr(c, "aws_secret_access_key", id, "AWS_SECRET_ACCESS_KEY", p.AWSSecretAccessKey, path+".awsSecretAccessKey")
	g.secretPtr(c, "aws_session_token", id, "AWS_SESSION_TOKEN", p.AWSSessionToken, path+".awsSessionToken")
	c.str("aws_role_arn", p.AWSRoleArn)
	c.str("aws_web_identity_token_file", p.AWSWebIdentityTokenFile)
	c.str("aws_role_session_name", p.AWSRoleSessionName)
	c.str("profile_name", p.ProfileName)
	c.str("retry_mode", p.RetryMode)
	c.int("total_max_attempts", p.TotalMaxAttempts)
	c.int("connect_timeout", p.ConnectTimeout)
	c.int("read_timeout", p.ReadTimeout)
	c.int("session_ttl", p.SessionTTL)
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: id, ptype: "remote::bedrock", config: c}, nil
}

func (g *generator) vertexAI(p v1beta1.VertexAIProvider, path string) (provider, error) {
	c := cfg{"project": p.Project}
	c.str("location", p.Location)
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: p.DeriveID(), ptype: "remote::vertexai", config: c}, nil
}

func (g *generator) watsonx(p v1beta1.WatsonxProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"api_key": g.secret(id, "API_KEY", p.APIKey, path+".apiKey")}
	c.str("base_url", p.Endpoint)
	c.str("project_id", p.ProjectID)
	c.int("timeout", p.Timeout)
	if err := g.remoteCommon(c, p.RemoteInferenceCommonConfig, path); err != nil {
		return provider{}, err
	}
	return provider{path: path, routed: true, id: id, ptype: "remote::watsonx", config: c}, nil
}

// vectorIOPersistence is where a vector_io provider keeps its vector
// stores' metadata: one KV namespace per provider, so that two providers of
// one type do not read each other's stores.
func vectorIOPersistence(id string) map[string]any {
	return storeRef(kvBackend, "namespace", "vector_io::"+id)
}

// Defaults of the server's PGVectorIVFFlatVectorIndex.
const (
	defaultIVFFlatLists  = 100
	defaultIVFFlatProbes = 10
)

func (g *generator) pgvector(p v1beta1.PgvectorProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{}
	c.str("host", p.Host)
	c.int("port", p.Port)
	c.str("db", p.DB)
	c.str("user", p.User)
	c["password"] = g.secret(id, "PASSWORD", p.Password, path+".password")
	c.str("distance_metric", p.DistanceMetric)
	if vi := p.VectorIndex; vi != nil {
		switch {
		case vi.HNSW != nil && vi.IVFFlat != nil:
			return provider{}, status.Invalid(path+".vectorIndex", "both hnsw and ivfFlat are set: keep one")
		case vi.HNSW != nil:
			index := cfg{"type": "HNSW"}
			index.int("m", vi.HNSW.M)
			index.int("ef_construction", vi.HNSW.EfConstruction)
			index.int("ef_search", vi.HNSW.EfSearch)
			c["vector_index"] = map[string]any(index)
		case vi.IVFFlat != nil:
			lists, probes := defaultIVFFlatLists, defaultIVFFlatProbes
			if vi.IVFFlat.Nlist != nil {
				lists = *vi.IVFFlat.Nlist
			}
			if vi.IVFFlat.Nprobe != nil {
				probes = *vi.IVFFlat.Nprobe
			}
			if probes >= lists {
				return provider{}, status.Invalid(path+".vectorIndex.ivfFlat",
					"nprobe (%d) is not below nlist (%d), which the OGX server refuses (unset values are 10 and 100): lower nprobe or raise nlist", probes, lists)
			}
			index := cfg{"type": "IVFFlat"}
			index.int("lists", vi.IVFFlat.Nlist)
			index.int("probes", vi.IVFFlat.Nprobe)
			c["vector_index"] = map[string]any(index)
		}
	}
	c["persistence"] = vectorIOPersistence(id)
	return provider{path: path, routed: true, id: id, ptype: "remote::pgvector", config: c, backends: []string{kvBackend}}, nil
}

func (g *generator) milvus(p v1beta1.MilvusProvider, path string) (provider, error) {
	id := p.DeriveID()
	// token has no default in the server's MilvusVectorIOConfig: it must be
	// written, null when there is none.
	c := cfg{"uri": p.URI, "token": nil}
	g.secretPtr(c, "token", id, "TOKEN", p.Token, path+".token")
	c.str("consistency_level", p.ConsistencyLevel)
	c["persistence"] = vectorIOPersistence(id)
	return provider{path: path, routed: true, id: id, ptype: "remote::milvus", config: c, backends: []string{kvBackend}}, nil
}

func (g *generator) qdrant(p v1beta1.QdrantProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{}
	c.str("url", p.URL)
	c.str("host", p.Host)
	c.int("port", p.Port)
	c.str("location", p.Location)
	g.secretPtr(c, "api_key", id, "API_KEY", p.APIKey, path+".apiKey")
	c.int("grpc_port", p.GRPCPort)
	c.bool("prefer_grpc", p.PreferGRPC)
	c.bool("https", p.HTTPS)
	c.str("prefix", p.Prefix)
	c.int("timeout", p.Timeout)
	c["persistence"] = vectorIOPersistence(id)
	return provider{path: path, routed: true, id: id, ptype: "remote::qdrant", config: c, backends: []string{kvBackend}}, nil
}

func (g *generator) braveSearch(p v1beta1.BraveSearchProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"api_key": g.secret(id, "API_KEY", p.APIKey, path+".apiKey")}
	c.int("max_results", p.MaxResults)
	return provider{path: path, routed: true, id: id, ptype: "remote::brave-search", config: c}, nil
}

func (g *generator) tavilySearch(p v1beta1.TavilySearchProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"api_key": g.secret(id, "API_KEY", p.APIKey, path+".apiKey")}
	c.int("max_results", p.MaxResults)
	return provider{path: path, routed: true, id: id, ptype: "remote::tavily-search", config: c}, nil
}

func (g *generator) mcp(p v1beta1.ModelContextProtocolProvider, path string) (provider, error) {
	return provider{path: path, routed: true, id: p.DeriveID(), ptype: "remote::model-context-protocol", config: cfg{}}, nil
}

func (g *generator) fileSearch(p v1beta1.InlineFileSearchProvider, path string) (provider, error) {
	c := cfg{}
	if p.VectorStoresConfig != nil {
		c["vector_stores_config"] = vectorStoresConfig(p.VectorStoresConfig)
	}
	return provider{path: path, routed: true, id: p.DeriveID(), ptype: "inline::file-search", config: c}, nil
}

// filesStorageDir is where inline::localfs keeps uploaded files, as in the
// server's sample config, under the default mount path.
const filesStorageDir = "${env.FILES_STORAGE_DIR:=/.ogx/files}"

func (g *generator) s3(p v1beta1.S3Provider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"bucket_name": p.BucketName}
	c.str("region", p.Region)
	c.str("endpoint_url", p.EndpointURL)
	g.secretPtr(c, "aws_access_key_id", id, "AWS_ACCESS_KEY_ID", p.AWSAccessKeyID, path+".awsAccessKeyId")
	g.secretPtr(c, "aws_secret_access_key", id, "AWS_SECRET_ACCESS_KEY", p.AWSSecretAccessKey, path+".awsSecretAccessKey")
	c.bool("auto_create_bucket", p.AutoCreateBucket)
	c["metadata_store"] = storeRef(sqlBackend, "table_name", "s3_files_metadata")
	return provider{path: path, id: id, ptype: "remote::s3", config: c, backends: []string{sqlBackend}}, nil
}

func (g *generator) localFS(p v1beta1.InlineLocalFSProvider, path string) (provider, error) {
	c := cfg{"storage_dir": filesStorageDir, "metadata_store": storeRef(sqlBackend, "table_name", "files_metadata")}
	c.int("ttl_secs", p.TTLSecs)
	return provider{path: path, id: p.DeriveID(), ptype: "inline::localfs", config: c, backends: []string{sqlBackend}}, nil
}

func (g *generator) reference(p v1beta1.InlineReferenceProvider, path string) (provider, error) {
	c := cfg{"kvstore": storeRef(kvBackend, "namespace", "batches")}
	c.int("max_concurrent_batches", p.MaxConcurrentBatches)
	c.int("max_concurrent_requests_per_batch", p.MaxConcurrentRequestsPerBatch)
	return provider{path: path, id: p.DeriveID(), ptype: "inline::reference", config: c, backends: []string{kvBackend}}, nil
}

func (g *generator) builtinResponses(p v1beta1.InlineBuiltinResponsesProvider, path string) (provider, error) {
	c := cfg{"persistence": map[string]any{
		"agent_state": storeRef(kvBackend, "namespace", "agents"),
		"responses":   storeRef(sqlBackend, "table_name", "responses"),
	}}
	if p.VectorStoresConfig != nil {
		c["vector_stores_config"] = vectorStoresConfig(p.VectorStoresConfig)
	}
	if cc := p.CompactionConfig; cc != nil {
		compaction := cfg{}
		compaction.str("summarization_prompt", cc.SummarizationPrompt)
		compaction.str("summary_prefix", cc.SummaryPrefix)
		compaction.str("summarization_model", cc.SummarizationModel)
		compaction.int("default_compact_threshold", cc.DefaultCompactThreshold)
		compaction.str("tokenizer_encoding", cc.TokenizerEncoding)
		c["compaction_config"] = map[string]any(compaction)
	}
	return provider{path: path, id: p.DeriveID(), ptype: "inline::builtin", config: c, backends: []string{kvBackend, sqlBackend}}, nil
}

func (g *generator) doclingServe(p v1beta1.DoclingServeProvider, path string) (provider, error) {
	id := p.DeriveID()
	c := cfg{"base_url": p.BaseURL}
	g.secretPtr(c, "api_key", id, "API_KEY", p.APIKey, path+".apiKey")
	c.int("default_chunk_size_tokens", p.DefaultChunkSizeTokens)
	return provider{path: path, id: id, ptype: "remote::docling-serve", config: c}, nil
}

func (g *generator) pypdf(p v1beta1.InlinePyPDFFileProcessorProvider, path string) (provider, error) {
	c := chunkConfig(p.FileProcessorChunkConfig)
	c.bool("extract_metadata", p.ExtractMetadata)
	c.bool("clean_text", p.CleanText)
	return provider{path: path, id: p.DeriveID(), ptype: "inline::pypdf", config: c}, nil
}

func (g *generator) docling(p v1beta1.InlineDoclingFileProcessorProvider, path string) (provider, error) {
	c := chunkConfig(p.FileProcessorChunkConfig)
	c.bool("do_ocr", p.DoOCR)
	return provider{path: path, id: p.DeriveID(), ptype: "inline::docling", config: c}, nil
}

func chunkConfig(cc v1beta1.FileProcessorChunkConfig) cfg {
	c := cfg{}
	c.int("default_chunk_size_tokens", cc.DefaultChunkSizeTokens)
	c.int("default_chunk_overlap_tokens", cc.DefaultChunkOverlapTokens)
	return c
}

// custom expands a custom provider: each secretRefs key becomes a config
// key read from a variable, and the settings are merged in as written.
func (g *generator) custom(p v1beta1.CustomProvider, path string) (provider, error) {
	if !strings.HasPrefix(p.Type, "remote::") && !strings.HasPrefix(p.Type, "inline::") {
		return provider{}, status.Invalid(path+".type",
			"type %q has no remote:: or inline:: prefix: write the provider type as the server names it (e.g. remote::gemini)", p.Type)
	}
	id := p.DeriveID()
	c := cfg{}
	keys := make([]string, 0, len(p.SecretRefs))
	for k := range p.SecretRefs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c[k] = g.secret(id, norm(k), p.SecretRefs[k], path+".secretRefs."+k)
	}
	settings, err := customSettings(p, path)
	if err != nil {
		return provider{}, err
	}
	keys = keys[:0]
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := p.SecretRefs[k]; ok {
			return provider{}, status.Invalid(path+".settings",
				"key %q is in both secretRefs and settings: remove it from one of them", k)
		}
		c[k] = settings[k]
	}
	return provider{path: path, routed: true, id: id, ptype: p.Type, config: c}, nil
}

// customSettings decodes a custom provider's settings: a JSON object, or
// nothing. Integers stay integers.
func customSettings(p v1beta1.CustomProvider, path string) (map[string]any, error) {
	if p.Settings == nil || len(bytes.TrimSpace(p.Settings.Raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(p.Settings.Raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("data after the value")
		}
	}
	if err != nil {
		return nil, status.Invalid(path+".settings", "settings are not valid JSON (%v): fix them", err)
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, status.Invalid(path+".settings", "settings are a %s, not an object of config keys: write them as key: value pairs", kindOf(v))
	}
	out, err := jsonNumbers(m)
	if err != nil {
		return nil, status.Invalid(path+".settings", "%v: fix the number", err)
	}
	return out.(map[string]any), nil
}

// jsonNumbers turns the json.Numbers of v into int64 (no '.', 'e' or 'E')
// or float64.
func jsonNumbers(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", s)
		}
		return f, nil
	case map[string]any:
		for k, e := range t {
			n, err := jsonNumbers(e)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
	case []any:
		for i, e := range t {
			n, err := jsonNumbers(e)
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
	}
	return v, nil
}

// vectorStoresConfig is the server's VectorStoresConfig; decimals given as
// strings stay strings (the server reads them as floats).
func vectorStoresConfig(vs *v1beta1.VectorStoresConfig) map[string]any {
	c := cfg{}
	c.str("default_provider_id", vs.DefaultProviderID)
	if m := vs.DefaultEmbeddingModel; m != nil {
		c["default_embedding_model"] = qualifiedModel(m)
	}
	if m := vs.DefaultRerankerModel; m != nil {
		c["default_reranker_model"] = map[string]any{"provider_id": m.ProviderID, "model_id": m.ModelID}
	}
	if p := vs.RewriteQueryParams; p != nil {
		s := cfg{}
		if p.Model != nil {
			s["model"] = qualifiedModel(p.Model)
		}
		s.str("prompt", p.Prompt)
		s.int("max_tokens", p.MaxTokens)
		s.strPtr("temperature", p.Temperature)
		c["rewrite_query_params"] = map[string]any(s)
	}
	if p := vs.FileSearchParams; p != nil {
		s := cfg{}
		s.str("header_template", p.HeaderTemplate)
		s.str("footer_template", p.FooterTemplate)
		c["file_search_params"] = map[string]any(s)
	}
	if p := vs.ContextPromptParams; p != nil {
		s := cfg{}
		s.str("chunk_annotation_template", p.ChunkAnnotationTemplate)
		s.str("context_template", p.ContextTemplate)
		c["context_prompt_params"] = map[string]any(s)
	}
	if p := vs.AnnotationPromptParams; p != nil {
		s := cfg{}
		s.bool("enable_annotations", p.EnableAnnotations)
		s.str("annotation_instruction_template", p.AnnotationInstructionTemplate)
		s.str("chunk_annotation_template", p.ChunkAnnotationTemplate)
		c["annotation_prompt_params"] = map[string]any(s)
	}
	if p := vs.FileIngestionParams; p != nil {
		s := cfg{}
		s.int("default_chunk_size_tokens", p.DefaultChunkSizeTokens)
		s.int("default_chunk_overlap_tokens", p.DefaultChunkOverlapTokens)
		c["file_ingestion_params"] = map[string]any(s)
	}
	if p := vs.ChunkRetrievalParams; p != nil {
		s := cfg{}
		s.int("chunk_multiplier", p.ChunkMultiplier)
		s.int("max_tokens_in_context", p.MaxTokensInContext)
		s.strPtr("default_reranker_strategy", p.DefaultRerankerStrategy)
		s.strPtr("rrf_impact_factor", p.RRFImpactFactor)
		s.strPtr("weighted_search_alpha", p.WeightedSearchAlpha)
		s.strPtr("default_search_mode", p.DefaultSearchMode)
		c["chunk_retrieval_params"] = map[string]any(s)
	}
	if p := vs.FileBatchParams; p != nil {
		s := cfg{}
		s.int("max_concurrent_files_per_batch", p.MaxConcurrentFilesPerBatch)
		s.int("file_batch_chunk_size", p.FileBatchChunkSize)
		s.int("cleanup_interval_seconds", p.CleanupIntervalSeconds)
		c["file_batch_params"] = map[string]any(s)
	}
	if p := vs.ContextualRetrievalParams; p != nil {
		s := cfg{}
		if p.Model != nil {
			s["model"] = qualifiedModel(p.Model)
		}
		s.int("default_timeout_seconds", p.DefaultTimeoutSeconds)
		s.int("default_max_concurrency", p.DefaultMaxConcurrency)
		s.int("max_document_tokens", p.MaxDocumentTokens)
		c["contextual_retrieval_params"] = map[string]any(s)
	}
	return c
}

func qualifiedModel(m *v1beta1.QualifiedModel) map[string]any {
	c := cfg{"provider_id": m.ProviderID, "model_id": m.ModelID}
	c.int("embedding_dimensions", m.EmbeddingDimensions)
	return c
}
