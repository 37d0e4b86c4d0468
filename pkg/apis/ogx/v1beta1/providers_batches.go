package v1beta1

import "slices"

// BatchesProvidersSpec holds the batches providers.
type BatchesProvidersSpec struct {
	// Remote batches providers.
	// +optional
	Remote *BatchesRemoteProviders `json:"remote,omitempty"`
	// Inline batches providers.
	// +optional
	Inline *BatchesInlineProviders `json:"inline,omitempty"`
}

// BatchesRemoteProviders are the remote batches providers.
type BatchesRemoteProviders struct {
	// Custom are remote batches providers of any type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// BatchesInlineProviders are the inline batches providers.
type BatchesInlineProviders struct {
	// Reference is the built-in batches provider (at most one; its ID is
	// inline-reference).
	// +optional
	Reference *InlineReferenceProvider `json:"reference,omitempty"`
	// Custom are inline batches providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// InlineReferenceProvider is the built-in batches provider.
type InlineReferenceProvider struct {
	// MaxConcurrentBatches caps the batches processed at once.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentBatches *int `json:"maxConcurrentBatches,omitempty"`
	// MaxConcurrentRequestsPerBatch caps the requests in flight per batch.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentRequestsPerBatch *int `json:"maxConcurrentRequestsPerBatch,omitempty"`
}

// DeriveID returns inline-reference.
func (p InlineReferenceProvider) DeriveID() string { return "inline-reference" }

// IDs returns the provider IDs, remote before inline.
func (s *BatchesProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = listIDs(r.Custom)
	}
	if in := s.Inline; in != nil {
		out = slices.Concat(out, oneID(in.Reference), listIDs(in.Custom))
	}
	return out
}
