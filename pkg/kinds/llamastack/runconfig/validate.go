package runconfig

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// validate checks what the CRD schema cannot, or what a caller that bypasses
// the API server could get wrong. It returns the first *status.Failure in field order.
func validate(cfg *v1alpha1.ServerConfig) error {
	for _, a := range providerAPIs(cfg.Providers) {
		if err := uniqueIDs(fmt.Sprintf(".providers.%s", a.field), "providerId", len(a.list),
			func(i int) string { return a.list[i].ProviderID }); err != nil {
			return err
		}
		for i, p := range a.list {
			if p.ProviderType == "" {
				return fieldErrorf(fmt.Sprintf(".providers.%s[%d].providerType", a.field, i),
					"is required, e.g. remote::vllm or inline::faiss")
			}
		}
	}
	checks := []error{
		uniqueIDs(".models", "modelId", len(cfg.Models), func(i int) string { return cfg.Models[i].ModelID }),
		uniqueIDs(".shields", "shieldId", len(cfg.Shields), func(i int) string { return cfg.Shields[i].ShieldID }),
		uniqueIDs(".vectorDBs", "vectorDBId", len(cfg.VectorDBs), func(i int) string { return cfg.VectorDBs[i].VectorDBID }),
		uniqueIDs(".toolGroups", "toolGroupId", len(cfg.ToolGroups), func(i int) string { return cfg.ToolGroups[i].ToolGroupID }),
		validateModels(cfg.Models),
		validateVectorDBs(cfg.VectorDBs),
		validateToolGroups(cfg.ToolGroups),
		validateKVStore(".metadataStore", cfg.MetadataStore),
		validateSQLStore(".inferenceStore", cfg.InferenceStore),
		validateServer(cfg.Server),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// uniqueIDs checks that the n ids of the list at sub are set and distinct.
func uniqueIDs(sub, key string, n int, id func(int) string) error {
	first := map[string]int{}
	for i := range n {
		v := id(i)
		if v == "" {
			return fieldErrorf(fmt.Sprintf("%s[%d].%s", sub, i, key), "is required")
		}
		if j, dup := first[v]; dup {
			return fieldErrorf(fmt.Sprintf("%s[%d].%s", sub, i, key),
				"duplicate %s %q: %s[%d] has it already", key, v, FieldPath+sub, j)
		}
		first[v] = i
	}
	return nil
}

func validateModels(models []v1alpha1.Model) error {
	for i, m := range models {
		switch m.ModelType {
		case "", v1alpha1.ModelTypeLLM, v1alpha1.ModelTypeEmbedding:
		default:
			return fieldErrorf(fmt.Sprintf(".models[%d].modelType", i),
				"unknown model type %q; use llm or embedding", m.ModelType)
		}
	}
	return nil
}

func validateVectorDBs(dbs []v1alpha1.VectorDB) error {
	for i, db := range dbs {
		if db.EmbeddingModel == "" {
			return fieldErrorf(fmt.Sprintf(".vectorDBs[%d].embeddingModel", i), "is required")
		}
		if db.EmbeddingDimension < 1 {
			return fieldErrorf(fmt.Sprintf(".vectorDBs[%d].embeddingDimension", i),
				"must be at least 1, the embedding model's dimension (e.g. 384)")
		}
	}
	return nil
}

func validateToolGroups(groups []v1alpha1.ToolGroup) error {
	for i, g := range groups {
		if g.ProviderID == "" {
			return fieldErrorf(fmt.Sprintf(".toolGroups[%d].providerId", i),
				"is required: the toolRuntime provider serving the group")
		}
	}
	return nil
}

// storeField is a store field, the backends it applies to, and whether it is set.
type storeField struct {
	name  string
	set   bool
	types []string
}

func checkStoreFields(sub, typ string, known []string, fields []storeField) error {
	if !slices.Contains(known, typ) {
		return fieldErrorf(sub+".type", "unknown type %q; use one of %s", typ, strings.Join(known, ", "))
	}
	for _, f := range fields {
		if f.set && !slices.Contains(f.types, typ) {
			return fieldErrorf(sub+"."+f.name, "applies only to type %s, not %s; remove it",
				strings.Join(f.types, " or "), typ)
		}
	}
	return nil
}

func checkPassword(sub, password string) error {
	if password != "" && !envRef(password) {
		return fieldErrorf(sub+".password",
			"must reference an environment variable, e.g. ${env.POSTGRES_PASSWORD}: "+
				"set the variable in spec.server.containerSpec.env from a Secret (valueFrom.secretKeyRef); "+
				"never write the password in the CR")
	}
	return nil
}

func validateKVStore(sub string, s *v1alpha1.KVStore) error {
	if s == nil {
		return nil
	}
	const sqlite, pg, redis, mongo = "sqlite", "postgres", "redis", "mongodb"
	err := checkStoreFields(sub, string(s.Type), []string{sqlite, pg, redis, mongo}, []storeField{
		{"dbPath", s.DBPath != "", []string{sqlite}},
		{"host", s.Host != "", []string{pg, redis, mongo}},
		{"port", s.Port != nil, []string{pg, redis, mongo}},
		{"db", s.DB != "", []string{pg, mongo}},
		{"user", s.User != "", []string{pg, mongo}},
		{"password", s.Password != "", []string{pg, mongo}},
		{"tableName", s.TableName != "", []string{pg}},
		{"collectionName", s.CollectionName != "", []string{mongo}},
	})
	if err != nil {
		return err
	}
	if s.Type == v1alpha1.KVStorePostgres && s.User == "" {
		return fieldErrorf(sub+".user", "is required for type postgres")
	}
	return checkPassword(sub, s.Password)
}

func validateSQLStore(sub string, s *v1alpha1.SQLStore) error {
	if s == nil {
		return nil
	}
	const sqlite, pg = "sqlite", "postgres"
	err := checkStoreFields(sub, string(s.Type), []string{sqlite, pg}, []storeField{
		{"dbPath", s.DBPath != "", []string{sqlite}},
		{"host", s.Host != "", []string{pg}},
		{"port", s.Port != nil, []string{pg}},
		{"db", s.DB != "", []string{pg}},
		{"user", s.User != "", []string{pg}},
		{"password", s.Password != "", []string{pg}},
	})
	if err != nil {
		return err
	}
	if s.Type == v1alpha1.SQLStorePostgres && s.User == "" {
		return fieldErrorf(sub+".user", "is required for type postgres")
	}
	return checkPassword(sub, s.Password)
}

func validateServer(s *v1alpha1.ServerSettings) error {
	if s == nil {
		return nil
	}
	if s.TLSCertFile != "" && s.TLSKeyFile == "" {
		return fieldErrorf(".server.tlsKeyFile", "is required with tlsCertFile: set both or neither")
	}
	if s.TLSKeyFile != "" && s.TLSCertFile == "" {
		return fieldErrorf(".server.tlsCertFile", "is required with tlsKeyFile: set both or neither")
	}
	return nil
}

// checkReferences checks that the providers the typed resources name are
// defined in the rendered document, after overrides, for their API.
func checkReferences(cfg *v1alpha1.ServerConfig, doc *object) error {
	defined := definedProviders(doc)
	if len(defined) == 0 {
		return fieldErrorf(".providers", "define at least one provider: llama-stack requires run.yaml providers")
	}
	type ref struct {
		sub, id, api string
		required     bool
	}
	var refs []ref
	for i, m := range cfg.Models {
		refs = append(refs, ref{fmt.Sprintf(".models[%d].providerId", i), m.ProviderID, "inference", false})
	}
	for i, s := range cfg.Shields {
		refs = append(refs, ref{fmt.Sprintf(".shields[%d].providerId", i), s.ProviderID, "safety", false})
	}
	for i, v := range cfg.VectorDBs {
		refs = append(refs, ref{fmt.Sprintf(".vectorDBs[%d].providerId", i), v.ProviderID, "vector_io", false})
	}
	for i, g := range cfg.ToolGroups {
		refs = append(refs, ref{fmt.Sprintf(".toolGroups[%d].providerId", i), g.ProviderID, "tool_runtime", true})
	}
	for _, r := range refs {
		if r.id == "" {
			continue // llama-stack picks the API's only provider
		}
		id, checkable := effectiveID(r.id)
		set := defined[r.api]
		if !checkable || set.open || slices.Contains(set.ids, id) {
			continue
		}
		have := "none"
		if len(set.ids) > 0 {
			have = strings.Join(set.ids, ", ")
		}
		return fieldErrorf(r.sub, "provider %q is not defined in %s.providers.%s; defined: %s",
			r.id, FieldPath, apiField(r.api), have)
	}
	return nil
}

// providerSet are the effective provider ids of an API, sorted. open is true
// when some id depends on the environment in a way that cannot be resolved
// here, so any reference may be valid.
type providerSet struct {
	ids  []string
	open bool
}

// definedProviders maps each API that has providers in doc to its provider set.
func definedProviders(doc *object) map[string]providerSet {
	out := map[string]providerSet{}
	providers, _ := doc.vals["providers"].(*object)
	if providers == nil {
		return out
	}
	for _, api := range providers.keys {
		list, _ := providers.vals[api].([]any)
		if len(list) == 0 {
			continue
		}
		var set providerSet
		for _, e := range list {
			p, _ := e.(*object)
			if p == nil {
				continue
			}
			raw, _ := p.vals["provider_id"].(string)
			if id, ok := effectiveID(raw); ok && raw != "" {
				set.ids = append(set.ids, id)
			} else {
				set.open = true
			}
		}
		slices.Sort(set.ids)
		set.ids = slices.Compact(set.ids)
		out[api] = set
	}
	return out
}
