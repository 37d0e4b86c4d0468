package operator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
)

// root is the repository's root.
var root = filepath.Join("..", "..")

// kustomized is the resources a kustomization.yaml lists.
func kustomized(t *testing.T, dir string) []string {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(filepath.Join(root, dir, "kustomization.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &k))
	return k.Resources
}

// The lists of kinds kept outside the registry hold every kind it serves,
// and nothing else: the CRDs and their kustomization, samples of each kind
// that make demo applies, the editor and viewer roles aggregated into the
// cluster's edit and view (upstream ships them for every kind), the chart
// embedded in the binary, a kuttl suite. Each one a new kind forgets fails here, naming the file
// (docs/adding-a-kind.md).
func TestEveryServedKindIsInEveryList(t *testing.T) {
	crds := map[string]bool{}
	for _, r := range kustomized(t, "config/crd") {
		crds[r] = true
		_, err := os.Stat(filepath.Join(root, "config", "crd", r))
		assert.NoError(t, err, "config/crd/kustomization.yaml lists a file that is not there")
	}
	samples := kustomized(t, "config/samples")
	roles := map[string]bool{}
	for _, r := range kustomized(t, "config/rbac") {
		roles[r] = true
	}
	served := map[string]bool{}
	for _, k := range Served() {
		gvk := k.GVK
		kind, lower := gvk.Kind, strings.ToLower(gvk.Kind)
		t.Run(kind, func(t *testing.T) {
			// The CRD, generated from the API package (make manifests).
			files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", gvk.Group+"_*.yaml"))
			require.NoError(t, err)
			var plural string
			for _, f := range files {
				var crd apiextensionsv1.CustomResourceDefinition
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				require.NoError(t, yaml.Unmarshal(b, &crd))
				if crd.Spec.Names.Kind == kind {
					plural = crd.Spec.Names.Plural
					assert.True(t, crds["bases/"+filepath.Base(f)], "config/crd/kustomization.yaml does not list bases/%s", filepath.Base(f))
					served[filepath.Base(f)] = true
				}
			}
			require.NotEmpty(t, plural, "config/crd/bases has no CRD of %s: run make manifests", kind)

			// A sample that make demo and the golden render tests take.
			found := false
			for _, s := range samples {
				b, err := os.ReadFile(filepath.Join(root, "config", "samples", s))
				require.NoError(t, err)
				found = found || bytes.Contains(b, []byte("\nkind: "+kind+"\n"))
			}
			assert.True(t, found, "config/samples/kustomization.yaml lists no sample of %s", kind)

			// Roles for the namespace's users, as upstream ships them.
			for role, verbs := range map[string][]string{
				lower + "_editor_role.yaml": {"create", "delete", "get", "list", "patch", "update", "watch"},
				lower + "_viewer_role.yaml": {"get", "list", "watch"},
			} {
				if !assert.True(t, roles[role], "config/rbac/kustomization.yaml does not list %s (the role %s users get)", role, kind) {
					continue
				}
				var cr rbacv1.ClusterRole
				b, err := os.ReadFile(filepath.Join(root, "config", "rbac", role))
				require.NoError(t, err)
				require.NoError(t, yaml.Unmarshal(b, &cr))
				require.NotEmpty(t, cr.Rules, role)
				assert.Equal(t, rbacv1.PolicyRule{APIGroups: []string{gvk.Group}, Resources: []string{plural}, Verbs: verbs}, cr.Rules[0], role)
				aggregate := "rbac.authorization.k8s.io/aggregate-to-view"
				if strings.Contains(role, "editor") {
					aggregate = "rbac.authorization.k8s.io/aggregate-to-edit"
				}
				assert.Equal(t, "true", cr.Labels[aggregate], "%s aggregates into the cluster's roles", role)
			}

			// The chart, embedded in the binary (charts/embed.go's list), and
			// a kuttl suite that creates a CR of the kind.
			_, err = charts.Load(k.Chart)
			assert.NoError(t, err, "the chart of %s: add it to charts/embed.go's go:embed line", kind)
			suites, err := filepath.Glob(filepath.Join(root, "test", "e2e", "*", "*.yaml"))
			require.NoError(t, err)
			found = false
			for _, f := range suites {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				found = found || bytes.Contains(b, []byte("kind: "+kind+"\n"))
			}
			assert.True(t, found, "no kuttl suite under test/e2e creates a %s", kind)
		})
	}
	for r := range crds {
		assert.True(t, served[strings.TrimPrefix(r, "bases/")], "config/crd/kustomization.yaml lists %s, of no kind the operator serves", r)
	}
}
