package olm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
)

// build runs kustomize (the library) on a directory of config/gitops and
// returns its objects as YAML documents by kind/name.
func build(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "gitops", dir))
	require.NoError(t, err, "kustomize build config/gitops/%s", dir)
	out := map[string][]byte{}
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		require.NoError(t, err)
		out[r.GetKind()+"/"+r.GetName()] = b
	}
	return out
}

// strict decodes an object into its Go type, refusing unknown fields: the
// schema check for the kinds we have types for.
func strict(t *testing.T, b []byte, into any) {
	t.Helper()
	require.NoError(t, yaml.UnmarshalStrict(b, into), "%s", b)
}

func wave(t *testing.T, b []byte) string {
	t.Helper()
	obj := struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}{}
	require.NoError(t, yaml.Unmarshal(b, &obj))
	return obj.Metadata.Annotations["argocd.argoproj.io/sync-wave"]
}

// The GitOps examples build with kustomize, every object decodes strictly
// into its type, the Subscription names this bundle's package, channel,
// catalog and (Manual) CSV, and the sync waves order namespace, catalog and
// operator group, subscription, then the CRs.
func TestGitOpsExamples(t *testing.T) {
	csv := committedCSV(t)
	op := build(t, "operator")
	// The OLM objects, and config/policy's policies with their bindings
	// (a bundle cannot carry them).
	policies := build(t, "../policy")
	require.NotEmpty(t, policies)
	require.Len(t, op, 4+len(policies))
	for key, b := range policies {
		assert.Equal(t, string(b), string(op[key]), "%s in config/gitops/operator as config/policy has it", key)
	}
	ns := &corev1.Namespace{}
	strict(t, op["Namespace/ai-stack-operator-system"], ns)
	cs := &operatorsv1alpha1.CatalogSource{}
	strict(t, op["CatalogSource/ai-stack-operator-catalog"], cs)
	assert.Equal(t, "quay.io/ai-stack-operator/ai-stack-operator-catalog:v"+csv.Spec.Version.String(), cs.Spec.Image, "the catalog image make catalog-build builds")
	og := &operatorsv1.OperatorGroup{}
	strict(t, op["OperatorGroup/ai-stack-operator"], og)
	assert.Empty(t, og.Spec.TargetNamespaces, "AllNamespaces")
	sub := &operatorsv1alpha1.Subscription{}
	strict(t, op["Subscription/ai-stack-operator"], sub)
	assert.Equal(t, Package, sub.Spec.Package)
	assert.Equal(t, Channel, sub.Spec.Channel)
	assert.Equal(t, cs.Name, sub.Spec.CatalogSource)
	assert.Equal(t, cs.Namespace, sub.Spec.CatalogSourceNamespace)
	assert.Equal(t, operatorsv1alpha1.ApprovalAutomatic, sub.Spec.InstallPlanApproval)
	for _, o := range []string{"CatalogSource/ai-stack-operator-catalog", "OperatorGroup/ai-stack-operator", "Subscription/ai-stack-operator"} {
		assert.Equal(t, ns.Namespace, "", "the Namespace is cluster-scoped")
		assert.Contains(t, string(op[o]), "namespace: "+ns.Name, o)
	}
	nsWave, _ := strconv.Atoi(wave(t, op["Namespace/ai-stack-operator-system"]))
	subWave, _ := strconv.Atoi(wave(t, op["Subscription/ai-stack-operator"]))
	assert.Less(t, nsWave, subWave, "the Namespace before the Subscription")

	manual := build(t, "operator-manual")
	sub = &operatorsv1alpha1.Subscription{}
	strict(t, manual["Subscription/ai-stack-operator"], sub)
	assert.Equal(t, operatorsv1alpha1.ApprovalManual, sub.Spec.InstallPlanApproval)
	assert.Equal(t, csv.Name, sub.Spec.StartingCSV, "startingCSV is this bundle's CSV")

	work := build(t, "workloads")
	scheme := operator.Scheme()
	served := map[string]bool{}
	for _, k := range operator.Served() {
		served[k.GVK.Kind] = true
	}
	kinds := map[string]int{}
	for key, b := range work {
		kind := strings.Split(key, "/")[0]
		var tm metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal(b, &tm))
		if tm.GroupVersionKind().Group == "" {
			// The Namespace and what the samples read (ConfigMaps) go first.
			assert.Empty(t, wave(t, b), key)
			continue
		}
		require.True(t, served[kind], "the workloads hold %s, of no kind the operator serves", key)
		kinds[kind]++
		typed, err := scheme.New(tm.GroupVersionKind())
		require.NoError(t, err, key)
		strict(t, b, typed)
		obj, err := apimeta.Accessor(typed)
		require.NoError(t, err)
		assert.Equal(t, "team-a", obj.GetNamespace(), key)
		assert.Equal(t, "1", wave(t, b), key)
		assert.Equal(t, "SkipDryRunOnMissingResource=true", obj.GetAnnotations()["argocd.argoproj.io/sync-options"], key)
	}
	for kind := range served {
		assert.Positive(t, kinds[kind], "the workloads hold samples of every kind: none of %s", kind)
	}
	// A sample's own annotations stay (the NemoGuardrails sample's).
	for key, b := range work {
		if strings.HasPrefix(key, "NemoGuardrails/") {
			assert.Contains(t, string(b), "security.opendatahub.io/enable-auth", key)
		}
	}

	apps := build(t, "argocd")
	require.Len(t, apps, 2)
	for _, b := range apps {
		app := struct {
			Spec struct {
				Source struct {
					RepoURL, TargetRevision, Path string
				} `json:"source"`
			} `json:"spec"`
		}{}
		require.NoError(t, yaml.Unmarshal(b, &app))
		_, err := os.Stat(filepath.Join(root, app.Spec.Source.Path, "kustomization.yaml"))
		assert.NoError(t, err, "the Application syncs a kustomization of this repository")
	}
}

// The OLM v1 example (config/gitops/operator-olmv1) builds with kustomize
// and names this bundle's package, channel and catalog image; the
// ClusterExtension installs into the Namespace it creates as the installer
// ServiceAccount it creates (bound to a ClusterRole), AllNamespaces (what OLM
// v1 installs without a watch namespace, and a mode the CSV supports); the
// waves order catalog and Namespace, installer, then the extension. test/olm's
// TestOLMv1InstallsUpgradesAndUninstalls applies it to real catalogd and operator-controller.
func TestGitOpsOLMv1Example(t *testing.T) {
	csv := committedCSV(t)
	objs := build(t, "operator-olmv1")
	require.Len(t, objs, 5)
	get := func(key string, path ...string) any {
		t.Helper()
		b, ok := objs[key]
		require.True(t, ok, "%s in config/gitops/operator-olmv1", key)
		var v any = map[string]any{}
		require.NoError(t, yaml.Unmarshal(b, &v))
		for _, p := range path {
			m, ok := v.(map[string]any)
			require.True(t, ok, "%s: %v", key, path)
			v = m[p]
		}
		return v
	}
	assert.Equal(t, "olm.operatorframework.io/v1", get("ClusterCatalog/ai-stack-operator-catalog", "apiVersion"))
	assert.Equal(t, "quay.io/ai-stack-operator/ai-stack-operator-catalog:v"+csv.Spec.Version.String(),
		get("ClusterCatalog/ai-stack-operator-catalog", "spec", "source", "image", "ref"), "the catalog image make catalog-build builds")
	ce := "ClusterExtension/" + Package
	assert.Equal(t, "olm.operatorframework.io/v1", get(ce, "apiVersion"))
	assert.Equal(t, Package, get(ce, "spec", "source", "catalog", "packageName"))
	assert.Equal(t, []any{Channel}, get(ce, "spec", "source", "catalog", "channels"))
	ns := get(ce, "spec", "namespace")
	assert.Equal(t, "ai-stack-operator-system", ns)
	get("Namespace/"+ns.(string), "metadata", "name")
	sa := get(ce, "spec", "serviceAccount", "name").(string)
	assert.Equal(t, ns, get("ServiceAccount/"+sa, "metadata", "namespace"))
	subjects := get("ClusterRoleBinding/"+sa, "subjects").([]any)
	require.Len(t, subjects, 1)
	assert.Equal(t, map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": ns}, subjects[0])
	assert.Nil(t, get(ce, "spec", "config"), "no watch namespace: AllNamespaces")
	all := false
	for _, m := range csv.Spec.InstallModes {
		all = all || (m.Type == operatorsv1alpha1.InstallModeTypeAllNamespaces && m.Supported)
	}
	assert.True(t, all, "the CSV supports AllNamespaces")
	waves := map[string]int{}
	for key := range objs {
		waves[key], _ = strconv.Atoi(wave(t, objs[key]))
	}
	assert.Less(t, waves["ClusterCatalog/ai-stack-operator-catalog"], waves["ServiceAccount/"+sa])
	assert.Less(t, waves["Namespace/"+ns.(string)], waves["ServiceAccount/"+sa])
	assert.Less(t, waves["ClusterRoleBinding/"+sa], waves[ce])
}
