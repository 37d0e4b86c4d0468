package llamastack

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
)

// What the running server says of itself (its version, providers and
// health) is read by pkg/stackserver's prober, in the background, at most
// once a minute per CR and only while its pods are ready.

// HealthCheck: upstream's condition of what the server answers.
const (
	TypeHealthCheck         = "HealthCheck"
	ReasonHealthCheckPassed = "HealthCheckPassed"
	ReasonHealthCheckFailed = "HealthCheckFailed"
	// ReasonHealthCheckNotAsked: the server requires client certificates.
	ReasonHealthCheckNotAsked = "HealthCheckNotAsked"
	// HealthCheckPodsNotReady is HealthCheck's message before the server
	// is asked.
	HealthCheckPodsNotReady = "the server's pods are not ready"
	// HealthCheckClientCerts is the HealthCheck message of a server that
	// requires client certificates (spec.server.config.server.tlsCAFile).
	HealthCheckClientCerts = "the server requires client certificates (spec.server.config.server.tlsCAFile), which the operator does not hold: it is not asked; its pods' readiness is a TCP connect"
)

// serverInfo is one probe's answer, in this API's types.
type serverInfo struct {
	// Version is the server's version; "" when it did not say.
	Version string
	// Providers are its providers, sorted by API and id; nil when it did not say.
	Providers []llamav1alpha1.ProviderInfo
	// Healthy is true when /v1/health answered OK; Problem says why not.
	Healthy bool
	Problem string
}

// infoOf is a probe's answer in this API's types.
func infoOf(a stackserver.Answer) serverInfo {
	info := serverInfo{Version: a.Version, Healthy: a.Healthy, Problem: a.Problem}
	if a.Providers != nil {
		info.Providers = []llamav1alpha1.ProviderInfo{}
	}
	for _, p := range a.Providers {
		info.Providers = append(info.Providers, llamav1alpha1.ProviderInfo{
			API: p.API, ProviderID: p.ProviderID, ProviderType: p.ProviderType,
			Config: apiextensionsv1.JSON{Raw: p.Config},
			Health: llamav1alpha1.ProviderHealthStatus{Status: p.Health.Status, Message: p.Health.Message},
		})
	}
	return info
}
