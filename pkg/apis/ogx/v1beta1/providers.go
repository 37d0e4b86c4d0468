package v1beta1

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ProvidersSpec adds providers to the generated config, per API. Each API
// has remote providers (a service the server calls) and inline providers
// (run inside the server); every API also takes custom providers of any
// type. Provider IDs must be unique across all APIs.
type ProvidersSpec struct {
	// Inference providers (API inference).
	// +optional
	Inference *InferenceProvidersSpec `json:"inference,omitempty"`
	// VectorIo providers (API vector_io).
	// +optional
	VectorIo *VectorIOProvidersSpec `json:"vectorIo,omitempty"`
	// ToolRuntime providers (API tool_runtime).
	// +optional
	ToolRuntime *ToolRuntimeProvidersSpec `json:"toolRuntime,omitempty"`
	// Files providers (API files).
	// +optional
	Files *FilesProvidersSpec `json:"files,omitempty"`
	// Batches providers (API batches).
	// +optional
	Batches *BatchesProvidersSpec `json:"batches,omitempty"`
	// Responses providers (API responses).
	// +optional
	Responses *ResponsesProvidersSpec `json:"responses,omitempty"`
	// FileProcessors providers (API file_processors).
	// +optional
	FileProcessors *FileProcessorsProvidersSpec `json:"fileProcessors,omitempty"`
}

// Provider is any provider entry; DeriveID gives its provider ID: the id
// field where the entry has one and it is set, else a default derived from
// the provider type.
//
// +kubebuilder:object:generate=false
type Provider interface {
	DeriveID() string
}

// RoutedProviderBase is the id field of the providers that may appear more
// than once.
// +kubebuilder:validation:XValidation:rule="!has(self.id) || self.id.size() > 0",message="provider id is empty: give an ID or omit id to use the default derived from the provider type"
type RoutedProviderBase struct {
	// ID is the provider's ID, unique across all providers; derived from
	// the provider type when unset.
	// +optional
	ID string `json:"id,omitempty"`
}

// idOr returns the id when set, else def.
func (b RoutedProviderBase) idOr(def string) string {
	if b.ID == "" {
		return def
	}
	return b.ID
}

// CustomProvider is a provider of any type, with its config given as is.
// +kubebuilder:validation:XValidation:rule="self.type.startsWith('remote::') || self.type.startsWith('inline::')",message="custom provider type must start with 'remote::' or 'inline::' (e.g. remote::my-guard): add the prefix"
type CustomProvider struct {
	RoutedProviderBase `json:",inline"`

	// Type is the provider type, prefixed remote:: or inline::.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Type string `json:"type"`

	// SecretRefs put Secret values into the provider's config: each key
	// becomes config.<key>, read from an environment variable fed by the
	// Secret. Each Secret must be in this namespace and labelled
	// ogx.io/watch: "true".
	// +optional
	// +kubebuilder:validation:MinProperties=1
	SecretRefs map[string]SecretKeyRef `json:"secretRefs,omitempty"`

	// Settings are merged into the provider's config as written; put secret
	// values in secretRefs instead.
	// +optional
	Settings *apiextensionsv1.JSON `json:"settings,omitempty"`
}

// DeriveID returns the id, or the type with "::" turned into "-".
func (c CustomProvider) DeriveID() string {
	return c.idOr(strings.ReplaceAll(c.Type, "::", "-"))
}

// IDs returns the IDs of all providers in the spec: API by API (inference,
// vectorIo, toolRuntime, files, batches, responses, fileProcessors), remote
// before inline, in list order. Repeats are kept.
func (s *ProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	return slices.Concat(
		s.Inference.IDs(), s.VectorIo.IDs(), s.ToolRuntime.IDs(), s.Files.IDs(),
		s.Batches.IDs(), s.Responses.IDs(), s.FileProcessors.IDs(),
	)
}

// listIDs returns the IDs of a list of providers.
func listIDs[T Provider](list []T) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, p.DeriveID())
	}
	return out
}

// oneID returns the ID of a single provider, or nothing when it is unset.
func oneID[T Provider](p *T) []string {
	if p == nil {
		return nil
	}
	return []string{(*p).DeriveID()}
}
