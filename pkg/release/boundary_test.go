package release

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/ai-stack-operator/ai-stack-operator"

// deps lists what the packages import, directly or not (go list -deps).
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	return strings.Fields(string(out))
}

// The generic reconciler knows no kind: adding one never changes it.
func TestReleaseImportsNoKind(t *testing.T) {
	all := deps(t, module+"/pkg/release/...")
	if len(all) < 50 {
		t.Fatalf("go list -deps gave %d packages; the check would pass on nothing", len(all))
	}
	for _, p := range all {
		if strings.HasPrefix(p, module+"/pkg/kinds/") || strings.HasPrefix(p, module+"/pkg/apis/") {
			t.Errorf("pkg/release depends on %s", p)
		}
	}
}

// Pure packages import nothing from controller-runtime (DESIGN.md).
func TestPurePackagesImportNoControllerRuntime(t *testing.T) {
	pure := []string{"pkg/status", "pkg/trust", "pkg/settings", "pkg/naming", "pkg/guard", "pkg/subset", "pkg/watches", "pkg/memlimit",
		"pkg/metricsauth",
		"pkg/kinds/llamastack/runconfig", "pkg/kinds/llamastack/distributions"}
	for _, p := range pure {
		for _, d := range deps(t, module+"/"+p) {
			if strings.HasPrefix(d, "sigs.k8s.io/controller-runtime") {
				t.Errorf("%s depends on %s", p, d)
			}
		}
	}
}

// The operator's binary links no API server code: k8s.io/apiserver (which
// controller-runtime's metrics filter would bring), the CRD validation of
// k8s.io/apiextensions-apiserver or CEL (which cmd/render needs) are about
// 10 MB of code, and the process maps what it links.
func TestTheOperatorLinksNoAPIServer(t *testing.T) {
	var found []string
	for _, d := range deps(t, module+"/cmd/manager") {
		if d == "k8s.io/apiserver/pkg/endpoints/deprecation" {
			continue // a table of API versions, through Helm's linter (helm.sh/helm/v3/pkg/action)
		}
		if strings.HasPrefix(d, "k8s.io/apiserver/") || strings.HasPrefix(d, "k8s.io/apiextensions-apiserver/pkg/apiserver") || strings.HasPrefix(d, "github.com/google/cel-go/") {
			found = append(found, d)
		}
	}
	if len(found) > 0 {
		t.Errorf("cmd/manager links %d API server packages, e.g. %s", len(found), found[0])
	}
}

// Only the kind's own packages, its API and the registry name a kind: the
// generic and shared packages stay kind-neutral, in code and comments.
func TestOnlyTheKindPackagesNameAKind(t *testing.T) {
	allowed := []string{"pkg/kinds/llamastack/", "pkg/apis/llamastack/", "pkg/operator/registry.go"}
	kind := regexp.MustCompile(`(?i)llama|llsd`)
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, a := range allowed {
			if strings.HasPrefix(rel, a) {
				return nil
			}
		}
		checked++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if kind.MatchString(line) {
				t.Errorf("%s:%d names a kind: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}
