package runconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// shapeV2 is the key order of SchemaV2: the field order of llama-stack's
// StackRunConfig and of the classes of its sections; keys it does not know
// follow, sorted.
var shapeV2 = &shape{
	keys: []string{"version", "image_name", "container_image", "apis", "providers",
		"metadata_store", "inference_store", "vector_store_config",
		"models", "shields", "vector_dbs", "datasets", "scoring_fns", "benchmarks", "tool_groups",
		"logging", "server", "external_providers_dir", "external_apis_dir"},
	field: map[string]*shape{
		"providers": {
			keys: providerAPINames(),
			each: &shape{keys: []string{"provider_id", "provider_type", "module", "config"}},
		},
		"metadata_store": {keys: []string{"type", "namespace", "db_path", "host", "port", "db", "user",
			"password", "table_name", "collection_name"}},
		"inference_store": {keys: []string{"type", "db_path", "host", "port", "db", "user", "password"}},
		"models":          {keys: []string{"model_id", "provider_id", "provider_model_id", "model_type", "metadata"}},
		"shields":         {keys: []string{"shield_id", "provider_id", "provider_shield_id", "params"}},
		"vector_dbs": {keys: []string{"vector_db_id", "embedding_model", "embedding_dimension", "provider_id",
			"provider_vector_db_id"}},
		"tool_groups": {keys: []string{"toolgroup_id", "provider_id", "mcp_endpoint", "args"}},
		"server": {keys: []string{"port", "host", "tls_certfile", "tls_keyfile", "tls_cafile", "auth", "quota",
			"cors"}},
	},
}

// emitV2 writes the run.yaml of SchemaV2, llama-stack 0.2.x (StackRunConfig
// in llama_stack/core/datatypes.py at v0.2.23, version 2). Keys follow that file's order;
// empty sections are left out.
func emitV2(cfg *v1alpha1.ServerConfig, opts Options, _ Version) (*object, error) {
	doc, err := head(cfg, opts, "image_name")
	if err != nil {
		return nil, err
	}
	doc.setObject("metadata_store", kvStoreV2(cfg.MetadataStore))
	doc.setObject("inference_store", sqlStoreV2(cfg.InferenceStore))

	lists := []struct {
		key  string
		emit func() ([]any, error)
	}{
		{"models", func() ([]any, error) { return modelsV2(cfg.Models) }},
		{"shields", func() ([]any, error) { return shieldsV2(cfg.Shields) }},
		{"vector_dbs", func() ([]any, error) { return vectorDBsV2(cfg.VectorDBs), nil }},
		{"tool_groups", func() ([]any, error) { return toolGroupsV2(cfg.ToolGroups) }},
	}
	for _, l := range lists {
		v, err := l.emit()
		if err != nil {
			return nil, err
		}
		doc.setList(l.key, v)
	}

	server, err := serverV2(cfg.Server, opts.Port)
	if err != nil {
		return nil, err
	}
	doc.set("server", server)
	return doc, nil
}

func providersV2(p *v1alpha1.Providers) (*object, error) {
	out := newObject()
	for _, a := range providerAPIs(p) {
		list := make([]any, 0, len(a.list))
		for i, pr := range a.list {
			o := newObject()
			o.set("provider_id", pr.ProviderID)
			o.set("provider_type", pr.ProviderType)
			o.setString("module", pr.Module)
			config, err := freeForm(fmt.Sprintf(".providers.%s[%d].config", a.field, i), pr.Config)
			if err != nil {
				return nil, err
			}
			if config != nil {
				o.set("config", config)
			}
			list = append(list, o)
		}
		out.setList(a.api, list)
	}
	return out, nil
}

func modelsV2(models []v1alpha1.Model) ([]any, error) {
	out := make([]any, 0, len(models))
	for i, m := range models {
		o := newObject()
		o.set("model_id", m.ModelID)
		o.setString("provider_id", m.ProviderID)
		o.setString("provider_model_id", m.ProviderModelID)
		o.setString("model_type", string(m.ModelType))
		meta, err := freeForm(fmt.Sprintf(".models[%d].metadata", i), m.Metadata)
		if err != nil {
			return nil, err
		}
		if meta != nil {
			o.set("metadata", meta)
		}
		out = append(out, o)
	}
	return out, nil
}

func shieldsV2(shields []v1alpha1.Shield) ([]any, error) {
	out := make([]any, 0, len(shields))
	for i, s := range shields {
		o := newObject()
		o.set("shield_id", s.ShieldID)
		o.setString("provider_id", s.ProviderID)
		o.setString("provider_shield_id", s.ProviderShieldID)
		params, err := freeForm(fmt.Sprintf(".shields[%d].params", i), s.Params)
		if err != nil {
			return nil, err
		}
		if params != nil {
			o.set("params", params)
		}
		out = append(out, o)
	}
	return out, nil
}

func vectorDBsV2(dbs []v1alpha1.VectorDB) []any {
	out := make([]any, 0, len(dbs))
	for _, d := range dbs {
		o := newObject()
		o.set("vector_db_id", d.VectorDBID)
		o.set("embedding_model", d.EmbeddingModel)
		o.set("embedding_dimension", int64(d.EmbeddingDimension))
		o.setString("provider_id", d.ProviderID)
		o.setString("provider_vector_db_id", d.ProviderVectorDBID)
		out = append(out, o)
	}
	return out
}

func toolGroupsV2(groups []v1alpha1.ToolGroup) ([]any, error) {
	out := make([]any, 0, len(groups))
	for i, g := range groups {
		o := newObject()
		o.set("toolgroup_id", g.ToolGroupID)
		o.set("provider_id", g.ProviderID)
		if g.MCPEndpoint != "" {
			uri := newObject()
			uri.set("uri", g.MCPEndpoint)
			o.set("mcp_endpoint", uri)
		}
		args, err := freeForm(fmt.Sprintf(".toolGroups[%d].args", i), g.Args)
		if err != nil {
			return nil, err
		}
		if args != nil {
			o.set("args", args)
		}
		out = append(out, o)
	}
	return out, nil
}

// kvStoreV2 writes a KVStoreConfig (llama_stack/providers/utils/kvstore/config.py).
func kvStoreV2(s *v1alpha1.KVStore) *object {
	if s == nil {
		return nil
	}
	o := newObject()
	o.set("type", string(s.Type))
	o.setString("namespace", s.Namespace)
	o.setString("db_path", s.DBPath)
	o.setString("host", s.Host)
	setPort(o, s.Port)
	o.setString("db", s.DB)
	o.setString("user", s.User)
	o.setString("password", s.Password)
	o.setString("table_name", s.TableName)
	o.setString("collection_name", s.CollectionName)
	return o
}

// sqlStoreV2 writes a SqlStoreConfig (llama_stack/providers/utils/sqlstore/sqlstore.py).
func sqlStoreV2(s *v1alpha1.SQLStore) *object {
	if s == nil {
		return nil
	}
	o := newObject()
	o.set("type", string(s.Type))
	o.setString("db_path", s.DBPath)
	o.setString("host", s.Host)
	setPort(o, s.Port)
	o.setString("db", s.DB)
	o.setString("user", s.User)
	o.setString("password", s.Password)
	return o
}

func setPort(o *object, p *intstr.IntOrString) {
	switch {
	case p == nil:
	case p.Type == intstr.Int:
		o.set("port", int64(p.IntVal))
	default:
		o.setString("port", p.StrVal)
	}
}

// serverV2 writes ServerConfig; port is the container's.
func serverV2(s *v1alpha1.ServerSettings, port int32) (*object, error) {
	o := newObject()
	o.set("port", int64(port))
	if s == nil {
		return o, nil
	}
	o.setString("host", s.Host)
	o.setString("tls_certfile", s.TLSCertFile)
	o.setString("tls_keyfile", s.TLSKeyFile)
	o.setString("tls_cafile", s.TLSCAFile)
	auth, err := freeForm(".server.auth", s.Auth)
	if err != nil {
		return nil, err
	}
	o.setObject("auth", auth)
	return o, nil
}

// head starts a run.yaml of either layout: the schema version, the
// distribution's name under nameKey, the APIs (given, or those with
// providers) and the providers.
func head(cfg *v1alpha1.ServerConfig, opts Options, nameKey string) (*object, error) {
	doc := newObject()
	doc.set("version", int64(SchemaVersion))
	doc.set(nameKey, opts.ImageName)
	providers, err := providersV2(cfg.Providers)
	if err != nil {
		return nil, err
	}
	if len(opts.APIs) > 0 {
		doc.set("apis", stringsAny(opts.APIs))
	} else {
		doc.setList("apis", sortedAny(providers.keys))
	}
	doc.setObject("providers", providers)
	return doc, nil
}
