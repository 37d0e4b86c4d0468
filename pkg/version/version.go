// Package version holds the operator's version, set at build time with
// -ldflags "-X github.com/ai-stack-operator/ai-stack-operator/pkg/version.Version=v1.2.3".
package version

// Version is the operator's version.
var Version = "v0.1.0-dev"
