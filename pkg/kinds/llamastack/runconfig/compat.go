package runconfig

import (
	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// feature is a typed field that only some llama-stack releases read: it is
// written for versions in [since, before) (a zero bound is open) and refused
// for the others, with the fix.
type feature struct {
	sub           string // CR path under FieldPath
	set           func(*v1alpha1.ServerConfig) bool
	since, before Version
	// fixOld and fixNew say what to do on a server older than since, or not
	// older than before.
	fixOld, fixNew string
}

func hasProviders(list func(*v1alpha1.Providers) []v1alpha1.Provider) func(*v1alpha1.ServerConfig) bool {
	return func(c *v1alpha1.ServerConfig) bool { return c.Providers != nil && len(list(c.Providers)) > 0 }
}

// features are the fields whose support changed between releases, read from
// llama-stack's Api enum and StackConfig at each release tag.
var features = []feature{{
	sub:    ".providers.telemetry",
	set:    hasProviders(func(p *v1alpha1.Providers) []v1alpha1.Provider { return p.Telemetry }),
	before: Version{0, 4, 0},
	fixNew: "llama-stack 0.4 removed the telemetry API; remove these providers",
}, {
	sub:    ".providers.agents",
	set:    hasProviders(func(p *v1alpha1.Providers) []v1alpha1.Provider { return p.Agents }),
	before: Version{0, 7, 0},
	fixNew: "llama-stack 0.7 renamed the agents API responses; move these providers to " +
		FieldPath + ".providers.responses (the built-in one is inline::builtin)",
}, {
	sub:    ".providers.responses",
	set:    hasProviders(func(p *v1alpha1.Providers) []v1alpha1.Provider { return p.Responses }),
	since:  Version{0, 7, 0},
	fixOld: "servers before 0.7 call this API agents; move these providers to " + FieldPath + ".providers.agents",
}, {
	sub:    ".providers.postTraining",
	set:    hasProviders(func(p *v1alpha1.Providers) []v1alpha1.Provider { return p.PostTraining }),
	before: Version{0, 7, 0},
	fixNew: "llama-stack 0.7 removed the post_training API; remove these providers",
}, {
	sub:    ".providers.batches",
	set:    hasProviders(func(p *v1alpha1.Providers) []v1alpha1.Provider { return p.Batches }),
	since:  Version{0, 2, 17},
	fixOld: "servers before 0.2.17 have no batches API; remove these providers",
}, {
	sub:    ".toolGroups",
	set:    func(c *v1alpha1.ServerConfig) bool { return len(c.ToolGroups) > 0 },
	before: Version{0, 7, 0},
	fixNew: "llama-stack 0.7 ignores registered tool groups (it registers the built-in groups of its " +
		"toolRuntime providers itself); remove toolGroups, and connect MCP servers with run.yaml " +
		"connectors through " + FieldPath + ".overrides",
}}

// checkVersion refuses the typed fields the target version does not read.
func checkVersion(cfg *v1alpha1.ServerConfig, t Target) error {
	zero := Version{}
	for _, f := range features {
		if !f.set(cfg) {
			continue
		}
		fix := ""
		switch {
		case f.since != zero && t.Version.Less(f.since):
			fix = f.fixOld
		case f.before != zero && !t.Version.Less(f.before):
			fix = f.fixNew
		default:
			continue
		}
		hint := ""
		if t.Source != FromField {
			hint = "; if the server is another version, set " + FieldPath + ".serverVersion"
		}
		return fieldErrorf(f.sub, "is not supported by %s: %s%s", t.describe(), fix, hint)
	}
	return nil
}

// movedKeys are top-level run.yaml keys of one layout that the other layout
// reads elsewhere (and a server ignores where they are), with where they went.
var movedKeys = map[Schema]map[string]string{
	// written for 0.2, read from 0.3 under storage or registered_resources
	SchemaStorage: {
		"metadata_store":  "storage (the backend kv_default and storage.stores.metadata)",
		"inference_store": "storage (the backend sql_default and storage.stores.inference)",
		"models":          "registered_resources.models",
		"shields":         "registered_resources.shields",
		"vector_dbs":      "registered_resources.vector_stores (vector_store_id, provider_vector_store_id)",
		"datasets":        "registered_resources.datasets",
		"scoring_fns":     "registered_resources.scoring_fns",
		"benchmarks":      "registered_resources.benchmarks",
		"tool_groups":     "registered_resources.tool_groups",
	},
	// written for 0.3 and later, read by 0.2 at the top level
	SchemaV2: {
		"storage":              "metadata_store and inference_store",
		"registered_resources": "the top level (models, shields, vector_dbs, ...)",
		"distro_name":          "image_name",
	},
}

// checkOverrideKeys refuses top-level overrides the target's layout would
// ignore because it reads them elsewhere.
func checkOverrideKeys(overrides *object, t Target) error {
	if overrides == nil {
		return nil
	}
	moved := movedKeys[t.Version.Schema()]
	for _, k := range overrides.keys {
		where, ok := moved[k]
		if !ok {
			continue
		}
		hint := ""
		if t.Source != FromField {
			hint = "; if the server is another version, set " + FieldPath + ".serverVersion"
		}
		return fieldErrorf(".overrides."+k, "%s does not read %s: write it as %s%s", t.describe(), k, where, hint)
	}
	return nil
}
