package v1beta1

import "slices"

// ToolRuntimeProvidersSpec holds the tool_runtime providers.
type ToolRuntimeProvidersSpec struct {
	// Remote tool_runtime providers.
	// +optional
	Remote *ToolRuntimeRemoteProviders `json:"remote,omitempty"`
	// Inline tool_runtime providers.
	// +optional
	Inline *ToolRuntimeInlineProviders `json:"inline,omitempty"`
}

// ToolRuntimeRemoteProviders are the remote tool_runtime providers, by type.
type ToolRuntimeRemoteProviders struct {
	// BraveSearch are remote::brave-search providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	BraveSearch []BraveSearchProvider `json:"braveSearch,omitempty"`
	// TavilySearch are remote::tavily-search providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	TavilySearch []TavilySearchProvider `json:"tavilySearch,omitempty"`
	// ModelContextProtocol are remote::model-context-protocol providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	ModelContextProtocol []ModelContextProtocolProvider `json:"modelContextProtocol,omitempty"`
	// Custom are remote tool_runtime providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// ToolRuntimeInlineProviders are the inline tool_runtime providers.
type ToolRuntimeInlineProviders struct {
	// FileSearch are inline file search providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FileSearch []InlineFileSearchProvider `json:"fileSearch,omitempty"`
	// Custom are inline tool_runtime providers of any type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// BraveSearchProvider is a remote::brave-search provider.
type BraveSearchProvider struct {
	RoutedProviderBase `json:",inline"`
	// APIKey is the Secret key holding the Brave Search API key.
	// +kubebuilder:validation:Required
	APIKey SecretKeyRef `json:"apiKey"`
	// MaxResults caps the results per search.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxResults *int `json:"maxResults,omitempty"`
}

// TavilySearchProvider is a remote::tavily-search provider.
type TavilySearchProvider struct {
	RoutedProviderBase `json:",inline"`
	// APIKey is the Secret key holding the Tavily API key.
	// +kubebuilder:validation:Required
	APIKey SecretKeyRef `json:"apiKey"`
	// MaxResults caps the results per search.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxResults *int `json:"maxResults,omitempty"`
}

// ModelContextProtocolProvider is a remote::model-context-protocol provider.
type ModelContextProtocolProvider struct {
	RoutedProviderBase `json:",inline"`
}

// InlineFileSearchProvider is the inline file search provider.
type InlineFileSearchProvider struct {
	RoutedProviderBase `json:",inline"`
	// VectorStoresConfig tunes the vector stores file search uses.
	// +optional
	VectorStoresConfig *VectorStoresConfig `json:"vectorStoresConfig,omitempty"`
}

// DeriveID returns the id, or remote-brave-search.
func (p BraveSearchProvider) DeriveID() string { return p.idOr("remote-brave-search") }

// DeriveID returns the id, or remote-tavily-search.
func (p TavilySearchProvider) DeriveID() string { return p.idOr("remote-tavily-search") }

// DeriveID returns the id, or remote-model-context-protocol.
func (p ModelContextProtocolProvider) DeriveID() string {
	return p.idOr("remote-model-context-protocol")
}

// DeriveID returns the id, or inline-file-search.
func (p InlineFileSearchProvider) DeriveID() string { return p.idOr("inline-file-search") }

// IDs returns the provider IDs, remote before inline.
func (s *ToolRuntimeProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = slices.Concat(listIDs(r.BraveSearch), listIDs(r.TavilySearch),
			listIDs(r.ModelContextProtocol), listIDs(r.Custom))
	}
	if in := s.Inline; in != nil {
		out = slices.Concat(out, listIDs(in.FileSearch), listIDs(in.Custom))
	}
	return out
}
