package configgen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// defaultModelType is a model's type when the spec gives none.
const defaultModelType = "llm"

// modelTypes are the model types the server has (ModelType).
var modelTypes = []string{"llm", "embedding", "rerank"}

// allProviders is the provider ID that registers a model with the first
// active inference provider (the server's provider_id "all").
const allProviders = "all"

// envTemplate is the server's ${env.NAME}, ${env.NAME:=default} and
// ${env.NAME:+value}.
var envTemplate = regexp.MustCompile(`\$\{env\.([A-Z0-9_]+)(?::([=+])([^}]*))?\}`)

// models builds registered_resources.models from spec.resources.models;
// inference is the config's inference providers.
func (g *generator) models(inference []any) ([]any, error) {
	r := g.spec.Resources
	if r == nil || len(r.Models) == 0 {
		return nil, nil
	}
	var ids []string
	for _, entry := range inference {
		if m, ok := asMap(entry); ok {
			if id, ok := m["provider_id"].(string); ok && id != "" {
				ids = append(ids, id)
			}
		}
	}
	def := ""
	for _, id := range ids {
		if !strings.Contains(id, "${") {
			def = id
			break
		}
	}
	models := make([]any, 0, len(r.Models))
	for i, m := range r.Models {
		path := fmt.Sprintf("spec.resources.models[%d]", i)
		if m.Name == "" {
			return nil, status.Invalid(path+".name", "the model has no name: give its ID")
		}
		pid := m.Provider
		switch {
		case pid == "" && def == "" && len(ids) == 0:
			return nil, status.Invalid(path+".provider",
				"model %q names no provider and the config has no inference provider: add one under spec.providers.inference", m.Name)
		case pid == "" && def == "":
			return nil, status.Invalid(path+".provider",
				"model %q names no provider and every inference provider's ID depends on an environment variable (%s): name the provider", m.Name, strings.Join(ids, ", "))
		case pid == "":
			pid = def
		case !knownProvider(pid, ids) && len(ids) == 0:
			return nil, status.Invalid(path+".provider",
				"provider %q is not an inference provider of the config, which has none: add it under spec.providers.inference", pid)
		case !knownProvider(pid, ids):
			return nil, status.Invalid(path+".provider",
				"provider %q is not an inference provider of the config (%s): name one of them, or omit provider to use the first", pid, strings.Join(ids, ", "))
		}
		mt := m.ModelType
		if mt == "" {
			mt = defaultModelType
		}
		if !slices.Contains(modelTypes, mt) {
			return nil, status.Invalid(path+".modelType",
				"model type %q is not one the OGX server has: use %s", mt, strings.Join(modelTypes, ", "))
		}
		entry := map[string]any{"model_id": m.Name, "provider_id": pid, "model_type": mt}
		meta := cfg{}
		meta.int("context_length", m.ContextLength)
		meta.str("quantization", m.Quantization)
		if len(meta) > 0 {
			entry["metadata"] = map[string]any(meta)
		}
		models = append(models, entry)
	}
	return models, nil
}

// knownProvider reports whether id is "all", one of ids, or what one of
// the env-templated ids can become.
func knownProvider(id string, ids []string) bool {
	if id == allProviders || slices.Contains(ids, id) {
		return true
	}
	for _, t := range ids {
		if strings.Contains(t, "${") && templateMatches(t, id) {
			return true
		}
	}
	return false
}

// templateMatches reports whether template, a string with ${env...}
// references, can resolve to s: ${env.X:+v} gives v or nothing, ${env.X}
// and ${env.X:=d} give anything.
func templateMatches(template, s string) bool {
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, m := range envTemplate.FindAllStringSubmatchIndex(template, -1) {
		re.WriteString(regexp.QuoteMeta(template[last:m[0]]))
		if m[4] >= 0 && template[m[4]:m[5]] == "+" {
			value := ""
			if m[6] >= 0 {
				value = template[m[6]:m[7]]
			}
			re.WriteString("(?:" + regexp.QuoteMeta(value) + ")?")
		} else {
			re.WriteString("(?s:.*)")
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(template[last:]))
	re.WriteString("$")
	ok, err := regexp.MatchString(re.String(), s)
	return err == nil && ok
}
