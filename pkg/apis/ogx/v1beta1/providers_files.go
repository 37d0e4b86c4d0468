package v1beta1

import "slices"

// FilesProvidersSpec holds the files providers.
type FilesProvidersSpec struct {
	// Remote files providers.
	// +optional
	Remote *FilesRemoteProviders `json:"remote,omitempty"`
	// Inline files providers.
	// +optional
	Inline *FilesInlineProviders `json:"inline,omitempty"`
}

// FilesRemoteProviders are the remote files providers.
type FilesRemoteProviders struct {
	// S3 is the remote::s3 provider (at most one; its ID is remote-s3).
	// +optional
	S3 *S3Provider `json:"s3,omitempty"`
	// Custom are remote files providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// FilesInlineProviders are the inline files providers.
type FilesInlineProviders struct {
	// LocalFS is the inline::localfs provider (at most one; its ID is
	// inline-localfs).
	// +optional
	LocalFS *InlineLocalFSProvider `json:"localfs,omitempty"`
	// Custom are inline files providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// S3Provider stores files in an S3 bucket.
// +kubebuilder:validation:XValidation:rule="!has(self.region) || self.region.size() > 0",message="s3 provider region is empty: give an AWS region or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.endpointUrl) || self.endpointUrl.size() > 0",message="s3 provider endpointUrl is empty: give the S3 endpoint URL or omit the field"
type S3Provider struct {
	// BucketName is the bucket.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	BucketName string `json:"bucketName"`
	// Region is the bucket's AWS region.
	// +optional
	Region string `json:"region,omitempty"`
	// AWSAccessKeyID is the Secret key holding the access key ID; not needed
	// with IAM roles.
	// +optional
	AWSAccessKeyID *SecretKeyRef `json:"awsAccessKeyId,omitempty"`
	// AWSSecretAccessKey is the Secret key holding the secret access key; not
	// needed with IAM roles.
	// +optional
	AWSSecretAccessKey *SecretKeyRef `json:"awsSecretAccessKey,omitempty"`
	// EndpointURL is an S3-compatible endpoint (e.g. MinIO) instead of AWS.
	// +optional
	EndpointURL string `json:"endpointUrl,omitempty"`
	// AutoCreateBucket creates the bucket when it is missing.
	// +optional
	AutoCreateBucket *bool `json:"autoCreateBucket,omitempty"`
}

// InlineLocalFSProvider stores files on the server's local disk.
type InlineLocalFSProvider struct {
	// TTLSecs is how long, in seconds, an uploaded file is kept.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TTLSecs *int `json:"ttlSecs,omitempty"`
}

// DeriveID returns remote-s3.
func (p S3Provider) DeriveID() string { return "remote-s3" }

// DeriveID returns inline-localfs.
func (p InlineLocalFSProvider) DeriveID() string { return "inline-localfs" }

// IDs returns the provider IDs, remote before inline.
func (s *FilesProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = slices.Concat(oneID(r.S3), listIDs(r.Custom))
	}
	if in := s.Inline; in != nil {
		out = slices.Concat(out, oneID(in.LocalFS), listIDs(in.Custom))
	}
	return out
}
