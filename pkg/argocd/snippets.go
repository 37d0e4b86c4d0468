package argocd

import (
	"bytes"

	"sigs.k8s.io/yaml"
)

// ConfigMapPatch is the argocd-cm patch that adds the checks to an Argo CD
// (resource.customizations.health.<group>_<Kind>). The scripts need no open
// libraries, so no useOpenLibs key is set.
func ConfigMapPatch(checks []Check) ([]byte, error) {
	data := map[string]string{}
	for _, c := range checks {
		data["resource.customizations.health."+c.Key()] = c.Script
	}
	return document("# Generated from config/argocd/<group>/<Kind>/health.lua by `make argocd`; do not edit.\n# Merge into Argo CD's argocd-cm: kubectl -n argocd patch configmap argocd-cm --patch-file config/argocd/argocd-cm-patch.yaml\n", map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data":     data,
	})
}

// OpenShiftGitOpsPatch is the same for OpenShift GitOps, whose operator owns
// argocd-cm: ArgoCD spec.resourceHealthChecks.
func OpenShiftGitOpsPatch(checks []Check) ([]byte, error) {
	var list []any
	for _, c := range checks {
		list = append(list, map[string]any{"group": c.Group, "kind": c.Kind, "check": c.Script})
	}
	return document("# Generated from config/argocd/<group>/<Kind>/health.lua by `make argocd`; do not edit.\n# Merge into OpenShift GitOps' ArgoCD: oc -n openshift-gitops patch argocd openshift-gitops --type merge --patch-file config/argocd/openshift-gitops-patch.yaml\n# (a merge patch replaces spec.resourceHealthChecks: add any checks of your own to this list first).\n", map[string]any{
		"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
		"metadata": map[string]any{"name": "openshift-gitops", "namespace": "openshift-gitops"},
		"spec":     map[string]any{"resourceHealthChecks": list},
	})
}

func document(header string, obj map[string]any) ([]byte, error) {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return append([]byte(header), bytes.TrimSpace(b)...), nil
}
