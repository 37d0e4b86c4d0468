package v1beta1

import "slices"

// VectorIOProvidersSpec holds the vector_io providers.
type VectorIOProvidersSpec struct {
	// Remote vector_io providers.
	// +optional
	Remote *VectorIORemoteProviders `json:"remote,omitempty"`
	// Inline vector_io providers.
	// +optional
	Inline *VectorIOInlineProviders `json:"inline,omitempty"`
}

// VectorIORemoteProviders are the remote vector_io providers, by type.
type VectorIORemoteProviders struct {
	// Pgvector are remote::pgvector providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Pgvector []PgvectorProvider `json:"pgvector,omitempty"`
	// Milvus are remote::milvus providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Milvus []MilvusProvider `json:"milvus,omitempty"`
	// Qdrant are remote::qdrant providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Qdrant []QdrantProvider `json:"qdrant,omitempty"`
	// Custom are remote vector_io providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// VectorIOInlineProviders are the inline vector_io providers.
type VectorIOInlineProviders struct {
	// Custom are inline vector_io providers of any type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// PgvectorProvider is a remote::pgvector provider: PostgreSQL with pgvector.
// +kubebuilder:validation:XValidation:rule="!has(self.host) || self.host.size() > 0",message="pgvector provider host is empty: give the PostgreSQL host or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.db) || self.db.size() > 0",message="pgvector provider db is empty: give a database name or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.user) || self.user.size() > 0",message="pgvector provider user is empty: give a user name or omit the field"
type PgvectorProvider struct {
	RoutedProviderBase `json:",inline"`
	// Host is the PostgreSQL host.
	// +optional
	Host string `json:"host,omitempty"`
	// Port is the PostgreSQL port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int `json:"port,omitempty"`
	// DB is the database name.
	// +optional
	DB string `json:"db,omitempty"`
	// User is the database user.
	// +optional
	User string `json:"user,omitempty"`
	// Password is the Secret key holding the database password.
	// +kubebuilder:validation:Required
	Password SecretKeyRef `json:"password"`
	// DistanceMetric is the vector distance used in searches.
	// +optional
	// +kubebuilder:validation:Enum=COSINE;L2;L1;INNER_PRODUCT
	DistanceMetric string `json:"distanceMetric,omitempty"`
	// VectorIndex is the approximate nearest neighbour index.
	// +optional
	VectorIndex *VectorIndexConfig `json:"vectorIndex,omitempty"`
}

// VectorIndexConfig is a pgvector index: exactly one of hnsw and ivfFlat.
// +kubebuilder:validation:XValidation:rule="has(self.hnsw) || has(self.ivfFlat)",message="pgvector vectorIndex needs hnsw or ivfFlat: set one"
// +kubebuilder:validation:XValidation:rule="!(has(self.hnsw) && has(self.ivfFlat))",message="pgvector vectorIndex.hnsw and vectorIndex.ivfFlat cannot both be set: keep one"
type VectorIndexConfig struct {
	// HNSW is an HNSW index.
	// +optional
	HNSW *HNSWConfig `json:"hnsw,omitempty"`
	// IVFFlat is an IVFFlat index.
	// +optional
	IVFFlat *IVFFlatConfig `json:"ivfFlat,omitempty"`
}

// HNSWConfig tunes an HNSW index.
type HNSWConfig struct {
	// M is the most links per graph node.
	// +optional
	// +kubebuilder:validation:Minimum=1
	M *int `json:"m,omitempty"`
	// EfConstruction is the candidate list size while building.
	// +optional
	// +kubebuilder:validation:Minimum=1
	EfConstruction *int `json:"efConstruction,omitempty"`
	// EfSearch is the candidate list size while searching.
	// +optional
	// +kubebuilder:validation:Minimum=1
	EfSearch *int `json:"efSearch,omitempty"`
}

// IVFFlatConfig tunes an IVFFlat index.
type IVFFlatConfig struct {
	// Nlist is the number of clusters.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Nlist *int `json:"nlist,omitempty"`
	// Nprobe is the number of clusters searched per query.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Nprobe *int `json:"nprobe,omitempty"`
}

// MilvusProvider is a remote::milvus provider.
// +kubebuilder:validation:XValidation:rule="!has(self.consistencyLevel) || self.consistencyLevel.size() > 0",message="milvus provider consistencyLevel is empty: give a consistency level or omit the field"
type MilvusProvider struct {
	RoutedProviderBase `json:",inline"`
	// URI is the Milvus server's URI.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	URI string `json:"uri"`
	// Token is the Secret key holding the Milvus token.
	// +optional
	Token *SecretKeyRef `json:"token,omitempty"`
	// ConsistencyLevel is the Milvus consistency level.
	// +optional
	ConsistencyLevel string `json:"consistencyLevel,omitempty"`
}

// QdrantProvider is a remote::qdrant provider; give url or host.
// +kubebuilder:validation:XValidation:rule="has(self.url) || has(self.host)",message="qdrant provider needs url or host: set at least one"
// +kubebuilder:validation:XValidation:rule="!has(self.url) || self.url.size() > 0",message="qdrant provider url is empty: give the server URL or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.host) || self.host.size() > 0",message="qdrant provider host is empty: give the server host or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.location) || self.location.size() > 0",message="qdrant provider location is empty: give a location or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.prefix) || self.prefix.size() > 0",message="qdrant provider prefix is empty: give a path prefix or omit the field"
type QdrantProvider struct {
	RoutedProviderBase `json:",inline"`
	// URL is the Qdrant server's URL.
	// +optional
	URL string `json:"url,omitempty"`
	// Host is the Qdrant server's host.
	// +optional
	Host string `json:"host,omitempty"`
	// Port is the REST port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int `json:"port,omitempty"`
	// APIKey is the Secret key holding the Qdrant API key.
	// +optional
	APIKey *SecretKeyRef `json:"apiKey,omitempty"`
	// Location is the Qdrant location identifier.
	// +optional
	Location string `json:"location,omitempty"`
	// GRPCPort is the gRPC port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	GRPCPort *int `json:"grpcPort,omitempty"`
	// PreferGRPC uses gRPC rather than REST.
	// +optional
	PreferGRPC *bool `json:"preferGrpc,omitempty"`
	// HTTPS connects over HTTPS.
	// +optional
	HTTPS *bool `json:"https,omitempty"`
	// Prefix is a path prefix of the REST API.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// Timeout is the connect timeout, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Timeout *int `json:"timeout,omitempty"`
}

// DeriveID returns the id, or remote-pgvector.
func (p PgvectorProvider) DeriveID() string { return p.idOr("remote-pgvector") }

// DeriveID returns the id, or remote-milvus.
func (p MilvusProvider) DeriveID() string { return p.idOr("remote-milvus") }

// DeriveID returns the id, or remote-qdrant.
func (p QdrantProvider) DeriveID() string { return p.idOr("remote-qdrant") }

// IDs returns the provider IDs, remote before inline.
func (s *VectorIOProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = slices.Concat(listIDs(r.Pgvector), listIDs(r.Milvus), listIDs(r.Qdrant), listIDs(r.Custom))
	}
	if in := s.Inline; in != nil {
		out = append(out, listIDs(in.Custom)...)
	}
	return out
}
