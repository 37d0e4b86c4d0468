package runconfig

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

type apiextensionsJSON = apiextensionsv1.JSON

// freeForm parses a free-form object field at FieldPath + sub; nil when unset.
func freeForm(sub string, j *apiextensionsJSON) (*object, error) {
	if j == nil || len(bytes.TrimSpace(j.Raw)) == 0 {
		return nil, nil
	}
	v, err := parseJSON(j.Raw)
	if err != nil {
		return nil, fieldErrorf(sub, "is not valid JSON: %v", err)
	}
	if v == nil {
		return nil, nil
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fieldErrorf(sub, "must be an object (a YAML mapping), not %s", jsonKind(v))
	}
	return o, nil
}

// apiProviders are the providers of one API.
type apiProviders struct {
	api   string // run.yaml name, e.g. vector_io
	field string // CR name, e.g. vectorIO
	list  []v1alpha1.Provider
}

// providerAPIs lists the provider lists of p in a fixed order, empty ones included.
func providerAPIs(p *v1alpha1.Providers) []apiProviders {
	if p == nil {
		p = &v1alpha1.Providers{}
	}
	return []apiProviders{
		{"inference", "inference", p.Inference},
		{"vector_io", "vectorIO", p.VectorIO},
		{"safety", "safety", p.Safety},
		{"agents", "agents", p.Agents},
		{"responses", "responses", p.Responses},
		{"telemetry", "telemetry", p.Telemetry},
		{"tool_runtime", "toolRuntime", p.ToolRuntime},
		{"eval", "eval", p.Eval},
		{"datasetio", "datasetio", p.DatasetIO},
		{"scoring", "scoring", p.Scoring},
		{"files", "files", p.Files},
		{"post_training", "postTraining", p.PostTraining},
		{"batches", "batches", p.Batches},
	}
}

// providerAPINames are the run.yaml API names of providerAPIs, in order.
func providerAPINames() []string {
	var names []string
	for _, a := range providerAPIs(nil) {
		names = append(names, a.api)
	}
	return names
}

// apiField maps a run.yaml API name to its CR field name.
func apiField(api string) string {
	for _, a := range providerAPIs(nil) {
		if a.api == api {
			return a.field
		}
	}
	return api
}

// conditionalID matches llama-stack's conditional provider id ${env.VAR:+id}:
// id when VAR is set, no provider otherwise.
var conditionalID = regexp.MustCompile(`^\$\{env\.[A-Za-z_][A-Za-z0-9_]*:\+([^${}]+)\}$`)

// effectiveID is the id a provider id or reference resolves to when enabled.
// ok is false when the id depends on the environment in another way and so
// cannot be checked.
func effectiveID(id string) (string, bool) {
	if m := conditionalID.FindStringSubmatch(id); m != nil {
		return m[1], true
	}
	return id, !strings.Contains(id, "${")
}

// envRef reports whether s references an environment variable.
func envRef(s string) bool { return strings.Contains(s, "${env.") }

func sortedAny(s []string) []any {
	s = slices.Clone(s)
	slices.Sort(s)
	s = slices.Compact(s)
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}
