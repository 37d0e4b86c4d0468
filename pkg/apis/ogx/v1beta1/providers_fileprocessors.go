package v1beta1

import "slices"

// FileProcessorsProvidersSpec holds the file_processors providers.
type FileProcessorsProvidersSpec struct {
	// Remote file_processors providers.
	// +optional
	Remote *FileProcessorsRemoteProviders `json:"remote,omitempty"`
	// Inline file_processors providers.
	// +optional
	Inline *FileProcessorsInlineProviders `json:"inline,omitempty"`
}

// FileProcessorsRemoteProviders are the remote file_processors providers.
type FileProcessorsRemoteProviders struct {
	// DoclingServe is the remote::docling-serve provider (at most one; its
	// ID is remote-docling-serve).
	// +optional
	DoclingServe *DoclingServeProvider `json:"doclingServe,omitempty"`
	// Custom are remote file_processors providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// FileProcessorsInlineProviders are the inline file_processors providers,
// each at most once.
type FileProcessorsInlineProviders struct {
	// Auto picks a processor per file (ID inline-auto).
	// +optional
	Auto *InlineAutoFileProcessorProvider `json:"auto,omitempty"`
	// PyPDF processes PDFs with pypdf (ID inline-pypdf).
	// +optional
	PyPDF *InlinePyPDFFileProcessorProvider `json:"pypdf,omitempty"`
	// MarkItDown converts files with MarkItDown (ID inline-markitdown).
	// +optional
	MarkItDown *InlineMarkItDownFileProcessorProvider `json:"markitdown,omitempty"`
	// Docling converts files with Docling (ID inline-docling).
	// +optional
	Docling *InlineDoclingFileProcessorProvider `json:"docling,omitempty"`
	// Custom are inline file_processors providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// FileProcessorChunkConfig is how a file processor chunks text when the
// chunking strategy is auto.
type FileProcessorChunkConfig struct {
	// DefaultChunkSizeTokens is the chunk size, in tokens.
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=4096
	DefaultChunkSizeTokens *int `json:"defaultChunkSizeTokens,omitempty"`
	// DefaultChunkOverlapTokens is the overlap of adjacent chunks, in tokens.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2048
	DefaultChunkOverlapTokens *int `json:"defaultChunkOverlapTokens,omitempty"`
}

// InlineAutoFileProcessorProvider is the inline::auto file processor.
type InlineAutoFileProcessorProvider struct {
	FileProcessorChunkConfig `json:",inline"`
	// ExtractMetadata reads document metadata (title, author, ...).
	// +optional
	ExtractMetadata *bool `json:"extractMetadata,omitempty"`
	// CleanText normalizes whitespace and line breaks of the text.
	// +optional
	CleanText *bool `json:"cleanText,omitempty"`
}

// InlinePyPDFFileProcessorProvider is the inline::pypdf file processor.
type InlinePyPDFFileProcessorProvider struct {
	FileProcessorChunkConfig `json:",inline"`
	// ExtractMetadata reads document metadata (title, author, ...).
	// +optional
	ExtractMetadata *bool `json:"extractMetadata,omitempty"`
	// CleanText normalizes whitespace and line breaks of the text.
	// +optional
	CleanText *bool `json:"cleanText,omitempty"`
}

// InlineMarkItDownFileProcessorProvider is the inline::markitdown file
// processor.
type InlineMarkItDownFileProcessorProvider struct {
	FileProcessorChunkConfig `json:",inline"`
}

// InlineDoclingFileProcessorProvider is the inline::docling file processor.
type InlineDoclingFileProcessorProvider struct {
	FileProcessorChunkConfig `json:",inline"`
	// DoOCR runs OCR on scanned pages.
	// +optional
	DoOCR *bool `json:"doOcr,omitempty"`
}

// DoclingServeProvider is a remote Docling Serve instance.
// +kubebuilder:validation:XValidation:rule="!has(self.baseUrl) || self.baseUrl.size() > 0",message="doclingServe baseUrl is empty: give the Docling Serve URL"
type DoclingServeProvider struct {
	// BaseURL is the Docling Serve URL.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	BaseURL string `json:"baseUrl"`
	// APIKey is the Secret key holding the Docling Serve API key.
	// +optional
	APIKey *SecretKeyRef `json:"apiKey,omitempty"`
	// DefaultChunkSizeTokens is the chunk size, in tokens, when the chunking
	// strategy is auto.
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=4096
	DefaultChunkSizeTokens *int `json:"defaultChunkSizeTokens,omitempty"`
}

// DeriveID returns inline-auto.
func (p InlineAutoFileProcessorProvider) DeriveID() string { return "inline-auto" }

// DeriveID returns inline-pypdf.
func (p InlinePyPDFFileProcessorProvider) DeriveID() string { return "inline-pypdf" }

// DeriveID returns inline-markitdown.
func (p InlineMarkItDownFileProcessorProvider) DeriveID() string { return "inline-markitdown" }

// DeriveID returns inline-docling.
func (p InlineDoclingFileProcessorProvider) DeriveID() string { return "inline-docling" }

// DeriveID returns remote-docling-serve.
func (p DoclingServeProvider) DeriveID() string { return "remote-docling-serve" }

// IDs returns the provider IDs, remote before inline.
func (s *FileProcessorsProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = slices.Concat(oneID(r.DoclingServe), listIDs(r.Custom))
	}
	if in := s.Inline; in != nil {
		out = slices.Concat(out, oneID(in.Auto), oneID(in.PyPDF), oneID(in.MarkItDown),
			oneID(in.Docling), listIDs(in.Custom))
	}
	return out
}
