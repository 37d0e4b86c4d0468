package v1beta1

import "slices"

// ResponsesProvidersSpec holds the responses providers.
type ResponsesProvidersSpec struct {
	// Remote responses providers.
	// +optional
	Remote *ResponsesRemoteProviders `json:"remote,omitempty"`
	// Inline responses providers.
	// +optional
	Inline *ResponsesInlineProviders `json:"inline,omitempty"`
}

// ResponsesRemoteProviders are the remote responses providers.
type ResponsesRemoteProviders struct {
	// Custom are remote responses providers of any type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// ResponsesInlineProviders are the inline responses providers.
type ResponsesInlineProviders struct {
	// Builtin is the built-in responses provider (at most one; its ID is
	// inline-builtin).
	// +optional
	Builtin *InlineBuiltinResponsesProvider `json:"builtin,omitempty"`
	// Custom are inline responses providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// InlineBuiltinResponsesProvider is the built-in responses provider.
type InlineBuiltinResponsesProvider struct {
	// VectorStoresConfig tunes the vector stores used for file search and
	// retrieval.
	// +optional
	VectorStoresConfig *VectorStoresConfig `json:"vectorStoresConfig,omitempty"`
	// CompactionConfig tunes how long conversations are summarized.
	// +optional
	CompactionConfig *CompactionConfig `json:"compactionConfig,omitempty"`
}

// VectorStoresConfig tunes vector stores: default models and the search,
// ingestion and prompt parameters.
// +kubebuilder:validation:XValidation:rule="!has(self.defaultProviderId) || self.defaultProviderId.size() > 0",message="vectorStoresConfig.defaultProviderId is empty: give a vector_io provider ID or omit the field"
type VectorStoresConfig struct {
	// DefaultProviderID is the vector_io provider used when several exist
	// and a request names none.
	// +optional
	DefaultProviderID string `json:"defaultProviderId,omitempty"`
	// DefaultEmbeddingModel is the embedding model used when a request
	// names none.
	// +optional
	DefaultEmbeddingModel *QualifiedModel `json:"defaultEmbeddingModel,omitempty"`
	// DefaultRerankerModel is the reranker model used when a request names
	// none.
	// +optional
	DefaultRerankerModel *RerankerModel `json:"defaultRerankerModel,omitempty"`
	// RewriteQueryParams turn on query rewriting; off when unset.
	// +optional
	RewriteQueryParams *RewriteQueryParams `json:"rewriteQueryParams,omitempty"`
	// FileSearchParams format file search results.
	// +optional
	FileSearchParams *FileSearchDisplayParams `json:"fileSearchParams,omitempty"`
	// ContextPromptParams are the templates that present retrieved context.
	// +optional
	ContextPromptParams *ContextPromptParams `json:"contextPromptParams,omitempty"`
	// AnnotationPromptParams set source citations.
	// +optional
	AnnotationPromptParams *AnnotationPromptParams `json:"annotationPromptParams,omitempty"`
	// FileIngestionParams set chunking at ingestion.
	// +optional
	FileIngestionParams *FileIngestionParams `json:"fileIngestionParams,omitempty"`
	// ChunkRetrievalParams set chunk retrieval and ranking.
	// +optional
	ChunkRetrievalParams *ChunkRetrievalParams `json:"chunkRetrievalParams,omitempty"`
	// FileBatchParams set file batch processing.
	// +optional
	FileBatchParams *FileBatchParams `json:"fileBatchParams,omitempty"`
	// ContextualRetrievalParams set contextual retrieval at ingestion.
	// +optional
	ContextualRetrievalParams *ContextualRetrievalParams `json:"contextualRetrievalParams,omitempty"`
}

// QualifiedModel is a model of a given provider.
type QualifiedModel struct {
	// ProviderID is the provider serving the model.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerId"`
	// ModelID is the model.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	ModelID string `json:"modelId"`
	// EmbeddingDimensions is the size of the model's embedding vectors.
	// +optional
	// +kubebuilder:validation:Minimum=1
	EmbeddingDimensions *int `json:"embeddingDimensions,omitempty"`
}

// RerankerModel is a reranker model of a given provider.
type RerankerModel struct {
	// ProviderID is the provider serving the model.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerId"`
	// ModelID is the model.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	ModelID string `json:"modelId"`
}

// RewriteQueryParams rewrite search queries with a model before searching.
type RewriteQueryParams struct {
	// Model rewrites the queries.
	// +optional
	Model *QualifiedModel `json:"model,omitempty"`
	// Prompt is the rewriting prompt; {query} stands for the query.
	// +optional
	Prompt string `json:"prompt,omitempty"`
	// MaxTokens caps the tokens of a rewritten query.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxTokens *int `json:"maxTokens,omitempty"`
	// Temperature is the sampling temperature, a decimal string such as
	// "0.3".
	// +optional
	Temperature *string `json:"temperature,omitempty"`
}

// FileSearchDisplayParams format file search results.
type FileSearchDisplayParams struct {
	// HeaderTemplate is the text before the results.
	// +optional
	HeaderTemplate string `json:"headerTemplate,omitempty"`
	// FooterTemplate is the text after the results.
	// +optional
	FooterTemplate string `json:"footerTemplate,omitempty"`
}

// ContextPromptParams are the templates that present retrieved context.
type ContextPromptParams struct {
	// ChunkAnnotationTemplate formats each chunk.
	// +optional
	ChunkAnnotationTemplate string `json:"chunkAnnotationTemplate,omitempty"`
	// ContextTemplate introduces the results to the model.
	// +optional
	ContextTemplate string `json:"contextTemplate,omitempty"`
}

// AnnotationPromptParams set source citations.
type AnnotationPromptParams struct {
	// EnableAnnotations adds source annotations.
	// +optional
	EnableAnnotations *bool `json:"enableAnnotations,omitempty"`
	// AnnotationInstructionTemplate tells the model how to cite sources.
	// +optional
	AnnotationInstructionTemplate string `json:"annotationInstructionTemplate,omitempty"`
	// ChunkAnnotationTemplate formats each chunk with its source.
	// +optional
	ChunkAnnotationTemplate string `json:"chunkAnnotationTemplate,omitempty"`
}

// FileIngestionParams set chunking at ingestion.
type FileIngestionParams struct {
	// DefaultChunkSizeTokens is the chunk size, in tokens.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DefaultChunkSizeTokens *int `json:"defaultChunkSizeTokens,omitempty"`
	// DefaultChunkOverlapTokens is the overlap of adjacent chunks, in tokens.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DefaultChunkOverlapTokens *int `json:"defaultChunkOverlapTokens,omitempty"`
}

// ChunkRetrievalParams set chunk retrieval and ranking.
type ChunkRetrievalParams struct {
	// ChunkMultiplier is how many times more chunks are fetched than
	// returned, for reranking.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ChunkMultiplier *int `json:"chunkMultiplier,omitempty"`
	// MaxTokensInContext caps the tokens of retrieved context.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxTokensInContext *int `json:"maxTokensInContext,omitempty"`
	// DefaultRerankerStrategy is how results are reranked.
	// +optional
	// +kubebuilder:validation:Enum=rrf;weighted;normalized
	DefaultRerankerStrategy *string `json:"defaultRerankerStrategy,omitempty"`
	// RRFImpactFactor is the reciprocal rank fusion constant, a decimal
	// string such as "60.0".
	// +optional
	RRFImpactFactor *string `json:"rrfImpactFactor,omitempty"`
	// WeightedSearchAlpha is the vector weight of weighted reranking, a
	// decimal string from "0.0" to "1.0".
	// +optional
	WeightedSearchAlpha *string `json:"weightedSearchAlpha,omitempty"`
	// DefaultSearchMode is how chunks are searched.
	// +optional
	// +kubebuilder:validation:Enum=vector;keyword;hybrid
	DefaultSearchMode *string `json:"defaultSearchMode,omitempty"`
}

// FileBatchParams set file batch processing.
type FileBatchParams struct {
	// MaxConcurrentFilesPerBatch caps the files processed at once per batch.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentFilesPerBatch *int `json:"maxConcurrentFilesPerBatch,omitempty"`
	// FileBatchChunkSize is the number of files handled per step.
	// +optional
	// +kubebuilder:validation:Minimum=1
	FileBatchChunkSize *int `json:"fileBatchChunkSize,omitempty"`
	// CleanupIntervalSeconds is how often expired batches are removed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	CleanupIntervalSeconds *int `json:"cleanupIntervalSeconds,omitempty"`
}

// ContextualRetrievalParams set contextual retrieval at ingestion: a model
// adds context to each chunk.
type ContextualRetrievalParams struct {
	// Model adds the context.
	// +optional
	Model *QualifiedModel `json:"model,omitempty"`
	// DefaultTimeoutSeconds is the timeout of each model call.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DefaultTimeoutSeconds *int `json:"defaultTimeoutSeconds,omitempty"`
	// DefaultMaxConcurrency caps the model calls in flight.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DefaultMaxConcurrency *int `json:"defaultMaxConcurrency,omitempty"`
	// MaxDocumentTokens caps the document size, in tokens.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxDocumentTokens *int `json:"maxDocumentTokens,omitempty"`
}

// CompactionConfig tunes how long conversations are summarized.
// +kubebuilder:validation:XValidation:rule="!has(self.summarizationPrompt) || self.summarizationPrompt.size() > 0",message="compactionConfig.summarizationPrompt is empty: give a prompt or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.summaryPrefix) || self.summaryPrefix.size() > 0",message="compactionConfig.summaryPrefix is empty: give a prefix or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.summarizationModel) || self.summarizationModel.size() > 0",message="compactionConfig.summarizationModel is empty: give a model or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.tokenizerEncoding) || self.tokenizerEncoding.size() > 0",message="compactionConfig.tokenizerEncoding is empty: give an encoding (e.g. o200k_base) or omit the field"
type CompactionConfig struct {
	// SummarizationPrompt asks the model to summarize the conversation.
	// +optional
	SummarizationPrompt string `json:"summarizationPrompt,omitempty"`
	// SummaryPrefix is put before the summary in the next context.
	// +optional
	SummaryPrefix string `json:"summaryPrefix,omitempty"`
	// SummarizationModel writes the summaries; the conversation's model
	// when unset.
	// +optional
	SummarizationModel string `json:"summarizationModel,omitempty"`
	// DefaultCompactThreshold is the token count above which a conversation
	// is compacted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DefaultCompactThreshold *int `json:"defaultCompactThreshold,omitempty"`
	// TokenizerEncoding is the tiktoken encoding that counts tokens (e.g.
	// o200k_base).
	// +optional
	TokenizerEncoding string `json:"tokenizerEncoding,omitempty"`
}

// DeriveID returns inline-builtin.
func (p InlineBuiltinResponsesProvider) DeriveID() string { return "inline-builtin" }

// IDs returns the provider IDs, remote before inline.
func (s *ResponsesProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = listIDs(r.Custom)
	}
	if in := s.Inline; in != nil {
		out = slices.Concat(out, oneID(in.Builtin), listIDs(in.Custom))
	}
	return out
}
