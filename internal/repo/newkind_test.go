package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
)

// shared are the files outside a kind's own places that a kind is in:
// the registry entry, and the lists each checked against the registry by a
// test that names the file (docs/adding-a-kind.md, "What the tests then ask
// for"). Generated files are not here: make writes them.
var shared = []string{
	"pkg/operator/registry.go",
	"charts/embed.go",
	"config/crd/kustomization.yaml",
	"config/samples/kustomization.yaml",
	"config/rbac/kustomization.yaml",
	"config/manifests/bases/ai-stack-operator.clusterserviceversion.yaml",
}

// features are files outside its own places that one kind is in, for a
// feature of that kind alone (no new kind needs them): each with why.
var features = map[string][]string{
	// Its own controller's entry in the registry; its driver's report; the
	// switch from upstream's operator, which waits for running jobs; the
	// admission policies of its driver.
	"LMEvalJob": {
		"pkg/operator/own.go", "pkg/lmesdriver/report.go", "pkg/switchover/switchover.go",
		"config/policy/lmevaljob_driver_roles.yaml", "config/policy/lmevaljob_driver_status.yaml",
	},
	// The admission policy that lets the TrustyAI family's servers bind the
	// proxy's ClusterRole; demo's NeMo configuration, which its sample reads.
	"NemoGuardrails": {"config/policy/trustyai_proxy_bindings.yaml", "hack/demo.sh"},
}

// A new kind is its own places (API package, kind package, chart, samples,
// health check, roles, tests, docs) and one registry entry: every other file
// that names a kind is a list checked against the registry (shared) or one
// kind's own feature (features). A file that names a kind and is neither is
// a new hand-kept list of kinds: derive it from the registry, or check it
// against the registry and add it to shared and to docs/adding-a-kind.md.
func TestAKindTouchesOnlyItsOwnPlacesAndTheRegistry(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	files := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, k := range operator.Served() {
		kind, plural := k.GVK.Kind, crdPlural(t, k.GVK.Group, k.GVK.Kind)
		// What names the kind: its Go packages, `kind: <Kind>`, its
		// resource, its chart.
		names := regexp.MustCompile(`kind: ` + kind + `\b|(^|[^a-z])` + plural + `([^a-z]|$)|(^|[^a-z-])` + regexp.QuoteMeta(k.Chart) + `([^a-z-]|$)|"` + kind + `"`)
		for _, f := range features[kind] {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil || !names.Match(b) {
				t.Errorf("features lists %s for %s, which does not name it (%v): take it off the list", f, kind, err)
			}
		}
		var touched []string
		for _, f := range files {
			if own(f, k) || generated(f) || slices.Contains(shared, f) || slices.Contains(features[kind], f) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if names.Match(b) {
				touched = append(touched, f)
			}
		}
		if len(touched) > 0 {
			t.Errorf("%s is named outside its own places and the registry, in %v: derive the list from operator.Served(), or check it against the registry and list the file in shared (and docs/adding-a-kind.md)", kind, touched)
		}
	}
}

// own says whether f is one of the kind's own places, or a test or a doc
// (which are per kind).
func own(f string, k operator.ServedKind) bool {
	lower := strings.ToLower(k.GVK.Kind)
	switch {
	case strings.HasSuffix(f, "_test.go"), strings.HasSuffix(f, ".md"),
		strings.HasPrefix(f, "test/"), strings.HasPrefix(f, "docs/"), strings.Contains(f, "/testdata/"),
		strings.HasPrefix(f, "pkg/apis/"), strings.HasPrefix(f, "pkg/kinds/"),
		strings.HasPrefix(f, "charts/"+k.Chart+"/"),
		strings.HasPrefix(f, "config/samples/") && f != "config/samples/kustomization.yaml",
		strings.HasPrefix(f, "config/argocd/"+k.GVK.Group+"/"+k.GVK.Kind+"/"),
		strings.HasPrefix(f, "config/rbac/"+lower+"_"):
		return true
	}
	return false
}

// generated says whether make writes f (manifests, bundle, argocd).
func generated(f string) bool {
	for _, p := range []string{"config/crd/bases/", "bundle/", "catalog/", "bundle.Dockerfile", "config/rbac/role.yaml", "config/argocd/argocd-cm-patch.yaml", "config/argocd/openshift-gitops-patch.yaml"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// crdPlural is the kind's resource, from its generated CRD.
func crdPlural(t *testing.T, group, kind string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", group+"_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names struct{ Kind, Plural string } `json:"names"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		if crd.Spec.Names.Kind == kind {
			return crd.Spec.Names.Plural
		}
	}
	t.Fatalf("no CRD of %s in config/crd/bases", kind)
	return ""
}
