package olm

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// builtObject is what the policy checks read of an object of a build.
type builtObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		PolicyName      string `json:"policyName"`
		MatchConditions []struct {
			Expression string `json:"expression"`
		} `json:"matchConditions"`
	} `json:"spec"`
	raw string
}

func objectsOf(t *testing.T, stream []byte) []builtObject {
	t.Helper()
	var out []builtObject
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		var o builtObject
		require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
		if o.Kind == "" {
			continue
		}
		o.raw = doc
		out = append(out, o)
	}
	return out
}

// kustomizations are the directories under config/ with a kustomization,
// relative to the repository root, sorted.
func kustomizations(t *testing.T) []string {
	t.Helper()
	var dirs []string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "config"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "kustomization.yaml" {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	}))
	slices.Sort(dirs)
	return dirs
}

// A binding of an admission policy that names no policy is ignored by the
// API server: the policy it meant is not in force. Every kustomization of
// config/ (each is something a user may `kubectl apply -k`) and
// dist/install.yaml (make build-installer, make deploy) must build, and each
// ValidatingAdmissionPolicyBinding in one must name a policy the same build
// defines. (config/policy once created its policies without the prefix its
// bindings named, so `kubectl apply -k config/policy`, the OLM guide's
// command, installed policies that never applied.)
func TestPolicyBindingsNameTheirPolicies(t *testing.T) {
	builds := map[string][]byte{}
	for _, dir := range kustomizations(t) {
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
		require.NoError(t, err, "kustomize build %s", dir)
		b, err := res.AsYaml()
		require.NoError(t, err)
		builds["kubectl apply -k "+dir] = b
	}
	installer, err := Installer(root, "registry.example.com/me/ai-stack-operator:v9.9.9")
	require.NoError(t, err)
	builds["dist/install.yaml"] = installer

	withPolicies := 0
	for name, b := range builds {
		policies, bindings := map[string]bool{}, 0
		for _, o := range objectsOf(t, b) {
			if o.Kind == "ValidatingAdmissionPolicy" {
				policies[o.Metadata.Name] = true
				assert.Empty(t, o.Metadata.Namespace, "%s: policy %s is cluster-scoped and carries no namespace", name, o.Metadata.Name)
			}
		}
		for _, o := range objectsOf(t, b) {
			if o.Kind != "ValidatingAdmissionPolicyBinding" {
				continue
			}
			bindings++
			assert.Empty(t, o.Metadata.Namespace, "%s: binding %s is cluster-scoped and carries no namespace", name, o.Metadata.Name)
			assert.True(t, policies[o.Spec.PolicyName], "%s: binding %s names policy %q, which this build does not define (it has %v): the binding would be ignored", name, o.Metadata.Name, o.Spec.PolicyName, policies)
		}
		if bindings > 0 {
			withPolicies++
		}
	}
	// config/policy, config/default and dist/install.yaml carry them.
	assert.GreaterOrEqual(t, withPolicies, 3, "builds with admission policies")
}

// The policies name the operator's ServiceAccount as OLM and config/default
// name it, and every ClusterRole of ours they name exists under that name in
// the installation and in the OLM bundle: a policy that matches nobody, or
// admits bindings of a role nobody ships, protects nothing.
func TestPoliciesNameWhatTheInstallationsName(t *testing.T) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "policy"))
	require.NoError(t, err)
	policyYAML, err := res.AsYaml()
	require.NoError(t, err)
	installer, err := Installer(root, "registry.example.com/me/ai-stack-operator:v9.9.9")
	require.NoError(t, err)

	installed := map[string]bool{}
	for _, o := range objectsOf(t, installer) {
		if o.Kind == "ClusterRole" {
			installed[o.Metadata.Name] = true
		}
		if o.Kind == "ServiceAccount" {
			assert.Equal(t, serviceAccount, o.Metadata.Name, "the operator's ServiceAccount in dist/install.yaml")
		}
	}
	bundled := map[string]bool{}
	entries, err := os.ReadDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), "_rbac.authorization.k8s.io_v1_clusterrole.yaml"); ok {
			bundled[name] = true
		}
	}
	roleName := regexp.MustCompile(`'(` + regexp.QuoteMeta(namePrefix) + `[a-z0-9-]+)'`)
	policies := 0
	for _, o := range objectsOf(t, policyYAML) {
		if o.Kind != "ValidatingAdmissionPolicy" {
			continue
		}
		policies++
		require.NotEmpty(t, o.Spec.MatchConditions, "policy %s", o.Metadata.Name)
		// The operator's ServiceAccount, or (the driver status policy) the
		// LMEvalJob drivers' <job>-lmes-driver.
		expr := o.Spec.MatchConditions[0].Expression
		assert.True(t, strings.Contains(expr, "endsWith(':"+serviceAccount+"')") || strings.Contains(expr, "endsWith('-lmes-driver')"), "policy %s matches the operator's ServiceAccount or a job driver's: %s", o.Metadata.Name, expr)
		for _, m := range roleName.FindAllStringSubmatch(o.raw, -1) {
			if m[1] == serviceAccount {
				continue
			}
			assert.True(t, installed[m[1]], "policy %s names ClusterRole %s, which dist/install.yaml does not define", o.Metadata.Name, m[1])
			assert.True(t, bundled[m[1]], "policy %s names ClusterRole %s, which the OLM bundle does not carry", o.Metadata.Name, m[1])
		}
	}
	assert.Equal(t, 4, policies)
}
