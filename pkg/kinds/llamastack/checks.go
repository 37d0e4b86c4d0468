package llamastack

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// checkNames refuses the CR's names and references that Kubernetes would
// refuse in the objects they reach (a container, a pod's ServiceAccount, a
// ConfigMap volume), so that the user reads which field to fix instead of an
// install that fails again and again. The CRD
// refuses most of them already; these checks also cover CRs stored before it
// did, and offline renders.
func checkNames(cr *llamav1alpha1.LlamaStackDistribution) error {
	server := cr.Spec.Server
	check := status.CheckName
	var checks []error
	if n := server.ContainerSpec.Name; n != "" {
		checks = append(checks, check("spec.server.containerSpec.name", n, validation.IsDNS1123Label, "container name (lowercase letters, digits and '-', at most 63 characters)"))
	}
	if img := server.Distribution.Image; img != "" && strings.TrimSpace(img) != img {
		checks = append(checks, status.Invalid("spec.server.distribution.image", "%s has leading or trailing whitespace; remove it", status.Quote(img)))
	}
	if po := server.PodOverrides; po != nil && po.ServiceAccountName != "" {
		checks = append(checks, check("spec.server.podOverrides.serviceAccountName", po.ServiceAccountName, validation.IsDNS1123Subdomain, "ServiceAccount name"))
	}
	if uc := server.UserConfig; uc != nil {
		checks = append(checks, check("spec.server.userConfig.configMapName", uc.ConfigMapName, validation.IsDNS1123Subdomain, "ConfigMap name"))
		if uc.ConfigMapNamespace != "" {
			checks = append(checks, check("spec.server.userConfig.configMapNamespace", uc.ConfigMapNamespace, validation.IsDNS1123Label, "namespace name"))
		}
	}
	if tc := server.TLSConfig; tc != nil && tc.CABundle != nil {
		ref := tc.CABundle
		checks = append(checks, check("spec.server.tlsConfig.caBundle.configMapName", ref.ConfigMapName, validation.IsDNS1123Subdomain, "ConfigMap name"))
		if ref.ConfigMapNamespace != "" {
			checks = append(checks, check("spec.server.tlsConfig.caBundle.configMapNamespace", ref.ConfigMapNamespace, validation.IsDNS1123Label, "namespace name"))
		}
		for i, k := range ref.ConfigMapKeys {
			checks = append(checks, check(fmt.Sprintf("spec.server.tlsConfig.caBundle.configMapKeys[%d]", i), k, validation.IsConfigMapKey, "ConfigMap key"))
		}
	}
	// spec.network.allowedFrom is not refused: an entry that can match no
	// namespace is left out of the NetworkPolicy and reported (network.go).
	if pdb := server.PodDisruptionBudget; pdb != nil {
		checks = append(checks, status.IntOrPercent("spec.server.podDisruptionBudget.minAvailable", pdb.MinAvailable))
		checks = append(checks, status.IntOrPercent("spec.server.podDisruptionBudget.maxUnavailable", pdb.MaxUnavailable))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}
