package release

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
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

// The layers below the reconciler stay below it: the CA bundle store and the
// Helm plumbing import neither the reconciler, the wiring nor a kind, and
// pkg/trust stays pure (no Kubernetes).
func TestLayersBelowTheReconcilerImportNothingAbove(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"pkg/cabundle":              {module + "/pkg/release", module + "/pkg/kinds/", module + "/pkg/apis/", module + "/pkg/operator"},
		"pkg/release/internal/helm": {module + "/pkg/release", module + "/pkg/kinds/", module + "/pkg/apis/", module + "/pkg/operator", module + "/pkg/cabundle"},
		"pkg/trust":                 {module + "/pkg/cabundle", "k8s.io/", "sigs.k8s.io/"},
	} {
		all := deps(t, module+"/"+pkg)
		if len(all) < 10 {
			t.Fatalf("go list -deps %s gave %d packages", pkg, len(all))
		}
		for _, d := range all {
			for _, b := range banned {
				if d != module+"/"+pkg && (d == b || strings.HasPrefix(d, b+"/") || (strings.HasSuffix(b, "/") && strings.HasPrefix(d, b))) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}

// Pure packages import nothing from controller-runtime (DESIGN.md).
func TestPurePackagesImportNoControllerRuntime(t *testing.T) {
	pure := []string{"pkg/status", "pkg/trust", "pkg/settings", "pkg/naming", "pkg/guard", "pkg/subset", "pkg/watches", "pkg/memlimit",
		"pkg/metricsauth", "pkg/stackserver",
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
		if strings.HasPrefix(d, "k8s.io/apiserver/") || strings.HasPrefix(d, "k8s.io/apiextensions-apiserver/pkg/apiserver") || strings.HasPrefix(d, "github.com/google/cel-go/") {
			found = append(found, d)
		}
	}
	if len(found) > 0 {
		t.Errorf("cmd/manager links %d API server packages, e.g. %s", len(found), found[0])
	}
}

// The operator's binary links what it runs (issue 47): Helm's chart engine
// and release format, not its action client, kube client, storage drivers,
// chart downloader or registry client, and none of what they bring: no OCI
// registry client, no containerd, no kubectl or cli-runtime, no SQL driver,
// no Helm 3 and no helm-operator-plugins.
func TestTheOperatorLinksWhatItRuns(t *testing.T) {
	forbidden := []string{
		"helm.sh/helm/v3/", "github.com/operator-framework/helm-operator-plugins/",
		"helm.sh/helm/v4/pkg/action", "helm.sh/helm/v4/pkg/kube", "helm.sh/helm/v4/pkg/storage",
		"helm.sh/helm/v4/pkg/downloader", "helm.sh/helm/v4/pkg/registry", "helm.sh/helm/v4/pkg/getter",
		"oras.land/", "github.com/containerd/", "k8s.io/cli-runtime/", "k8s.io/kubectl/",
		"github.com/jmoiron/sqlx", "github.com/lib/pq", "github.com/rubenv/sql-migrate",
	}
	var found []string
	for _, d := range deps(t, module+"/cmd/manager") {
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				found = append(found, d)
				break
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("cmd/manager links %d packages it does not run: %s", len(found), strings.Join(found, ", "))
	}
}

// Only the kind's own packages, its API and the registry name a kind: the
// generic and shared packages stay kind-neutral, in code and comments.
func TestOnlyTheKindPackagesNameAKind(t *testing.T) {
	allowed := []string{"pkg/kinds/llamastack/", "pkg/apis/llamastack/", "pkg/operator/registry.go",
		// The conversion from the old kind to its successor names both.
		"pkg/kinds/ogx/convert/", "pkg/kinds/ogx/legacy/"}
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

// No package holds a cache in a package variable: a cache is a field of its
// owner (the reconciler's caches, the CA bundle store's), so that its life
// and its size are its owner's, and a test's state is its own. A package
// variable of a type that locks (sync.Map, a mutex, atomics, or a struct
// type holding one) is such a cache; sync.Once and sync.Pool are not.
func TestNoCacheInAPackageVariable(t *testing.T) {
	root := filepath.Join("..", "..", "pkg")
	locking := regexp.MustCompile(`\bsync\.(Map|Mutex|RWMutex)\b|\batomic\.`)
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, files := range dirs {
		fset := token.NewFileSet()
		var parsed []*ast.File
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, af)
		}
		src := func(n ast.Node) string {
			var b strings.Builder
			_ = printer.Fprint(&b, fset, n)
			return b.String()
		}
		// The package's struct types that hold a lock.
		lockingTypes := map[string]bool{}
		for _, af := range parsed {
			for _, decl := range af.Decls {
				if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
					for _, s := range gd.Specs {
						ts := s.(*ast.TypeSpec)
						if locking.MatchString(src(ts.Type)) {
							lockingTypes[ts.Name.Name] = true
						}
					}
				}
			}
		}
		for _, af := range parsed {
			for _, decl := range af.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					checked++
					text := ""
					if vs.Type != nil {
						text = src(vs.Type)
					}
					for _, v := range vs.Values {
						if cl, ok := v.(*ast.CompositeLit); ok && cl.Type != nil {
							text += " " + src(cl.Type)
						}
					}
					named := strings.TrimPrefix(strings.TrimSpace(text), "*")
					if locking.MatchString(text) || lockingTypes[named] {
						t.Errorf("%s: package variable %s is a cache (%s): make it a field of its owner", fset.Position(vs.Pos()), vs.Names[0].Name, strings.TrimSpace(text))
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d package variables checked", checked)
	}
}
