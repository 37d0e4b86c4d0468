package v1beta1

import "slices"

// InferenceProvidersSpec holds the inference providers.
type InferenceProvidersSpec struct {
	// Remote inference providers.
	// +optional
	Remote *InferenceRemoteProviders `json:"remote,omitempty"`
	// Inline inference providers.
	// +optional
	Inline *InferenceInlineProviders `json:"inline,omitempty"`
}

// InferenceRemoteProviders are the remote inference providers, by type.
type InferenceRemoteProviders struct {
	// VLLM are remote::vllm providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	VLLM []VLLMProvider `json:"vllm,omitempty"`
	// OpenAI are remote::openai providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	OpenAI []OpenAIProvider `json:"openai,omitempty"`
	// Azure are remote::azure providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Azure []AzureProvider `json:"azure,omitempty"`
	// Bedrock are remote::bedrock providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Bedrock []BedrockProvider `json:"bedrock,omitempty"`
	// VertexAI are remote::vertexai providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	VertexAI []VertexAIProvider `json:"vertexai,omitempty"`
	// Watsonx are remote::watsonx providers.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Watsonx []WatsonxProvider `json:"watsonx,omitempty"`
	// Custom are remote inference providers of any other type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// InferenceInlineProviders are the inline inference providers.
type InferenceInlineProviders struct {
	// Custom are inline inference providers of any type.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Custom []CustomProvider `json:"custom,omitempty"`
}

// RemoteInferenceCommonConfig are the settings every typed remote inference
// provider has.
type RemoteInferenceCommonConfig struct {
	// AllowedModels limits the models that may be registered with the
	// provider; all are allowed when unset.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	AllowedModels []string `json:"allowedModels,omitempty"`
	// RefreshModels makes the provider re-read its model list from the
	// remote endpoint periodically.
	// +optional
	RefreshModels *bool `json:"refreshModels,omitempty"`
	// Network sets TLS, proxy, timeouts and headers of the connection.
	// +optional
	Network *NetworkConfig `json:"network,omitempty"`
}

// NetworkConfig is how a remote provider connects.
type NetworkConfig struct {
	// TLS sets certificate checking, minimum version and ciphers; CA
	// certificates and client identity are set in spec.tls.
	// +optional
	TLS *TLSConfig `json:"tls,omitempty"`
	// Proxy sets the HTTP proxy.
	// +optional
	Proxy *ProxyConfig `json:"proxy,omitempty"`
	// Timeout sets the connect and read timeouts.
	// +optional
	Timeout *TimeoutConfig `json:"timeout,omitempty"`
	// Headers are added to every request.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	Headers map[string]string `json:"headers,omitempty"`
}

// TLSConfig is a remote provider connection's TLS.
type TLSConfig struct {
	// Verify checks the server certificate; false turns checking off.
	// +optional
	Verify *bool `json:"verify,omitempty"`
	// MinVersion is the lowest TLS version accepted.
	// +optional
	// +kubebuilder:validation:Enum=TLSv1.2;TLSv1.3
	MinVersion string `json:"minVersion,omitempty"`
	// Ciphers are the cipher suites allowed.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	Ciphers []string `json:"ciphers,omitempty"`
}

// ProxyConfig is a remote provider connection's HTTP proxy.
// +kubebuilder:validation:XValidation:rule="!has(self.url) || self.url.size() > 0",message="network.proxy.url is empty: give a proxy URL or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || self.http.size() > 0",message="network.proxy.http is empty: give a proxy URL or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.https) || self.https.size() > 0",message="network.proxy.https is empty: give a proxy URL or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.cacert) || self.cacert.size() > 0",message="network.proxy.cacert is empty: give the CA certificate path or omit the field"
type ProxyConfig struct {
	// URL is the proxy for all connections.
	// +optional
	URL *string `json:"url,omitempty"`
	// HTTP is the proxy for http:// connections.
	// +optional
	HTTP *string `json:"http,omitempty"`
	// HTTPS is the proxy for https:// connections.
	// +optional
	HTTPS *string `json:"https,omitempty"`
	// CACert is the path of a CA certificate that verifies the proxy.
	// +optional
	CACert *string `json:"cacert,omitempty"`
	// NoProxy are hosts reached without the proxy.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	NoProxy []string `json:"noProxy,omitempty"`
}

// TimeoutConfig is a connection's timeouts, in seconds.
type TimeoutConfig struct {
	// Connect is the connect timeout.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Connect *int `json:"connect,omitempty"`
	// Read is the read timeout.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Read *int `json:"read,omitempty"`
}

// VLLMProvider is a remote::vllm provider: a vLLM server.
type VLLMProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Endpoint is the vLLM server's URL.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Endpoint string `json:"endpoint"`
	// APIToken is the Secret key holding the token sent to vLLM.
	// +optional
	APIToken *SecretKeyRef `json:"apiToken,omitempty"`
	// MaxTokens caps the tokens generated per request.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxTokens *int `json:"maxTokens,omitempty"`
}

// OpenAIProvider is a remote::openai provider.
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || self.endpoint.size() > 0",message="openai provider endpoint is empty: give the API base URL or omit the field"
type OpenAIProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Endpoint is the API base URL; OpenAI's when unset.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// APIKey is the Secret key holding the API key.
	// +kubebuilder:validation:Required
	APIKey SecretKeyRef `json:"apiKey"`
}

// AzureProvider is a remote::azure provider: Azure OpenAI.
// +kubebuilder:validation:XValidation:rule="!has(self.apiVersion) || self.apiVersion.size() > 0",message="azure provider apiVersion is empty: give an API version or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.apiType) || self.apiType.size() > 0",message="azure provider apiType is empty: give an API type or omit the field"
type AzureProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Endpoint is the Azure API base URL.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Endpoint string `json:"endpoint"`
	// APIKey is the Secret key holding the API key.
	// +kubebuilder:validation:Required
	APIKey SecretKeyRef `json:"apiKey"`
	// APIVersion is the Azure API version (e.g. 2024-12-01-preview).
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// APIType is the Azure API type.
	// +optional
	APIType string `json:"apiType,omitempty"`
}

// BedrockProvider is a remote::bedrock provider: AWS Bedrock.
// +kubebuilder:validation:XValidation:rule="!has(self.awsRoleArn) || self.awsRoleArn.size() > 0",message="bedrock provider awsRoleArn is empty: give a role ARN or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.awsWebIdentityTokenFile) || self.awsWebIdentityTokenFile.size() > 0",message="bedrock provider awsWebIdentityTokenFile is empty: give a file path or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.awsRoleSessionName) || self.awsRoleSessionName.size() > 0",message="bedrock provider awsRoleSessionName is empty: give a session name or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.profileName) || self.profileName.size() > 0",message="bedrock provider profileName is empty: give a profile name or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.retryMode) || self.retryMode.size() > 0",message="bedrock provider retryMode is empty: give a retry mode (e.g. standard) or omit the field"
type BedrockProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Region is the AWS region of the Bedrock runtime.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`
	// APIKey is the Secret key holding a Bedrock API key.
	// +optional
	APIKey *SecretKeyRef `json:"apiKey,omitempty"`
	// AWSAccessKeyID is the Secret key holding the AWS access key ID.
	// +optional
	AWSAccessKeyID *SecretKeyRef `json:"awsAccessKeyId,omitempty"`
	// AWSSecretAccessKey is the Secret key holding the AWS secret access key.
	// +optional
	AWSSecretAccessKey *SecretKeyRef `json:"awsSecretAccessKey,omitempty"`
	// AWSSessionToken is the Secret key holding an AWS session token.
	// +optional
	AWSSessionToken *SecretKeyRef `json:"awsSessionToken,omitempty"`
	// AWSRoleArn is a role to assume.
	// +optional
	AWSRoleArn string `json:"awsRoleArn,omitempty"`
	// AWSWebIdentityTokenFile is the path of a web identity token.
	// +optional
	AWSWebIdentityTokenFile string `json:"awsWebIdentityTokenFile,omitempty"`
	// AWSRoleSessionName is the session name used when assuming the role.
	// +optional
	AWSRoleSessionName string `json:"awsRoleSessionName,omitempty"`
	// ProfileName is the AWS profile to take credentials from.
	// +optional
	ProfileName string `json:"profileName,omitempty"`
	// TotalMaxAttempts caps the attempts per request, the first included.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TotalMaxAttempts *int `json:"totalMaxAttempts,omitempty"`
	// RetryMode is the AWS retry mode (e.g. standard, adaptive).
	// +optional
	RetryMode string `json:"retryMode,omitempty"`
	// ConnectTimeout is the connect timeout, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ConnectTimeout *int `json:"connectTimeout,omitempty"`
	// ReadTimeout is the read timeout, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ReadTimeout *int `json:"readTimeout,omitempty"`
	// SessionTTL is the session lifetime, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SessionTTL *int `json:"sessionTTL,omitempty"`
}

// VertexAIProvider is a remote::vertexai provider: Google Vertex AI.
// +kubebuilder:validation:XValidation:rule="!has(self.location) || self.location.size() > 0",message="vertexai provider location is empty: give a Google Cloud location or omit the field"
type VertexAIProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Project is the Google Cloud project ID.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Project string `json:"project"`
	// Location is the Google Cloud location.
	// +optional
	Location string `json:"location,omitempty"`
}

// WatsonxProvider is a remote::watsonx provider: IBM watsonx.ai.
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || self.endpoint.size() > 0",message="watsonx provider endpoint is empty: give the watsonx.ai URL or omit the field"
// +kubebuilder:validation:XValidation:rule="!has(self.projectId) || self.projectId.size() > 0",message="watsonx provider projectId is empty: give a project ID or omit the field"
type WatsonxProvider struct {
	RoutedProviderBase          `json:",inline"`
	RemoteInferenceCommonConfig `json:",inline"`
	// Endpoint is the watsonx.ai base URL.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// APIKey is the Secret key holding the API key.
	// +kubebuilder:validation:Required
	APIKey SecretKeyRef `json:"apiKey"`
	// ProjectID is the watsonx.ai project.
	// +optional
	ProjectID string `json:"projectId,omitempty"`
	// Timeout is the HTTP request timeout, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Timeout *int `json:"timeout,omitempty"`
}

// DeriveID returns the id, or remote-vllm.
func (p VLLMProvider) DeriveID() string { return p.idOr("remote-vllm") }

// DeriveID returns the id, or remote-openai.
func (p OpenAIProvider) DeriveID() string { return p.idOr("remote-openai") }

// DeriveID returns the id, or remote-azure.
func (p AzureProvider) DeriveID() string { return p.idOr("remote-azure") }

// DeriveID returns the id, or remote-bedrock.
func (p BedrockProvider) DeriveID() string { return p.idOr("remote-bedrock") }

// DeriveID returns the id, or remote-vertexai.
func (p VertexAIProvider) DeriveID() string { return p.idOr("remote-vertexai") }

// DeriveID returns the id, or remote-watsonx.
func (p WatsonxProvider) DeriveID() string { return p.idOr("remote-watsonx") }

// IDs returns the provider IDs, remote before inline.
func (s *InferenceProvidersSpec) IDs() []string {
	if s == nil {
		return nil
	}
	var out []string
	if r := s.Remote; r != nil {
		out = slices.Concat(listIDs(r.VLLM), listIDs(r.OpenAI), listIDs(r.Azure),
			listIDs(r.Bedrock), listIDs(r.VertexAI), listIDs(r.Watsonx), listIDs(r.Custom))
	}
	if in := s.Inline; in != nil {
		out = append(out, listIDs(in.Custom)...)
	}
	return out
}
