package lmeval

import (
	"strings"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// The CA bundle of a job whose model is reached over https, as upstream
// makes it: the certificates of Open Data Hub's trusted CA bundle and
// OpenShift's service CA, read in the job's namespace, merged into
// <job>-ca-bundle and mounted where Python's requests reads it.
const (
	// CABundleKey is the merged bundle's key and file.
	CABundleKey = "merged-ca-bundle.crt"
	// CABundleMountPath is where it is mounted (REQUESTS_CA_BUNDLE).
	CABundleMountPath = "/etc/ssl/certs/odh-ca-bundle.crt"
	// TrustedCABundle and ServiceCA are the source ConfigMaps.
	TrustedCABundle = "odh-trusted-ca-bundle"
	ServiceCA       = "openshift-service-ca.crt"
)

// TrustedCAKeys are the keys read from TrustedCABundle, in order; the
// service CA's is ServiceCAKey.
var TrustedCAKeys = []string{"ca-bundle.crt", "odh-ca-bundle.crt"}

// ServiceCAKey is the service CA's key.
const ServiceCAKey = "service-ca.crt"

// CABundleName is the merged bundle's ConfigMap.
func CABundleName(job string) string { return job + "-ca-bundle" }

// NeedsCABundle: a model argument base_url is https and no
// verify_certificate argument says otherwise (upstream's rule).
func NeedsCABundle(spec *lmv1alpha1.LMEvalJobSpec) bool {
	https := false
	for _, a := range spec.ModelArgs {
		if a.Name == "verify_certificate" {
			return false
		}
		if a.Name == "base_url" && strings.HasPrefix(strings.ToLower(a.Value), "https://") {
			https = true
		}
	}
	return https
}

// MergeCABundle joins the non-blank sources with newlines ("" for none).
func MergeCABundle(sources ...string) string {
	var parts []string
	for _, s := range sources {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}
