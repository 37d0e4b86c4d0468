package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every Helm kind package under pkg/kinds (one that defines a Kind type with
// a Gather method: the kinds on the release.Kind contract) has one file
// layout, so that the same step is in the same file in every kind:
//
//	doc.go       the package doc comment and nothing else
//	kind.go      the Kind type, the interface assertions, Meta (the method
//	             and the package func), Values, Conditions, and the optional
//	             hooks other than trust (Prepare and Cleanup may stay in
//	             trust.go where the kind has one)
//	inputs.go    the Inputs type, Gather, OfflineInputs and what they alone
//	             call (settings reading helpers may be in settings.go;
//	             trustRequest is in trust.go where the kind has one)
//	status.go    the observed type, computeStatus and its setters, and the
//	             Status method with its observe and read-back helpers
//	names.go     the release prefix, the chart and the child names
//	values.go    the translation of the CR into the chart's values
//	settings.go  the operator's settings the kind reads
//	rbac.go      the kubebuilder RBAC markers
//
// Any other package directly under pkg/kinds (lmeval, a run-to-completion
// kind) keeps its package comment in doc.go too.
func TestEveryKindHasTheSameLayout(t *testing.T) {
	kinds := filepath.Join(root, "pkg", "kinds")
	entries, err := os.ReadDir(kinds)
	if err != nil {
		t.Fatal(err)
	}
	var helm []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		problems, isHelm, err := kindLayout(filepath.Join(kinds, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if isHelm {
			helm = append(helm, e.Name())
			// The child names are the chart's: names.go is tested against a
			// render of the chart, for every object.
			tests, err := filepath.Glob(filepath.Join(kinds, e.Name(), "*_test.go"))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range tests {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				found = found || strings.Contains(string(b), "\nfunc TestNamesMatchTheChart(t *testing.T) {")
			}
			if !found {
				t.Errorf("pkg/kinds/%s has no TestNamesMatchTheChart: test names.go against a render of the chart, as pkg/kinds/ogx/names_test.go does", e.Name())
			}
		}
		for _, p := range problems {
			t.Errorf("pkg/kinds/%s: %s", e.Name(), p)
		}
	}
	// The check finds the Helm kinds it is about (it would pass on none).
	for _, k := range []string{"evalhub", "llamastack", "nemoguardrails", "ogx", "trustyai"} {
		if !slices.Contains(helm, k) {
			t.Errorf("pkg/kinds/%s is not recognised as a Helm kind (type Kind with method Gather); found %q", k, helm)
		}
	}
}

// The check reports a declaration in the wrong file, a package comment
// outside doc.go, doc.go missing and a file of the layout missing.
func TestKindLayoutProblemsAreFound(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) { writeFile(t, dir, rel, src) }
	// A Helm kind with Gather in kind.go, a second package comment in
	// status.go, and no rbac.go.
	write("a/doc.go", "// Package a is a kind.\npackage a\n")
	write("a/kind.go", "package a\n\ntype Kind struct{}\n\nfunc (*Kind) Meta() {}\nfunc Meta()         {}\nfunc (*Kind) Values() {}\nfunc (*Kind) Conditions() {}\nfunc (*Kind) Gather() {}\n")
	write("a/inputs.go", "package a\n\ntype Inputs struct{}\n\nfunc (*Kind) OfflineInputs() {}\n")
	write("a/status.go", "// Package a again.\npackage a\n\nfunc computeStatus() {}\nfunc (*Kind) Status() {}\n")
	write("a/names.go", "package a\n")
	write("a/values.go", "package a\n")
	write("a/settings.go", "package a\n")
	// A test file's comments are not the package's.
	write("a/kind_test.go", "// Package a's tests.\npackage a\n")
	// Not a Helm kind: only its package comment is checked.
	write("b/command.go", "// Package b runs to completion.\npackage b\n\nfunc Gather() {}\n")

	problems, helm, err := kindLayout(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"method Kind.Gather is in kind.go: move it to inputs.go",
		"rbac.go is missing: the Helm kinds keep their kubebuilder RBAC markers in it",
		"status.go has a package comment: move it to doc.go",
	}
	if !helm || !slices.Equal(problems, want) {
		t.Errorf("a: helm %v, problems %q; want helm true, %q", helm, problems, want)
	}

	problems, helm, err = kindLayout(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"command.go has a package comment: move it to doc.go",
		"doc.go is missing: write the package comment there",
	}
	if helm || !slices.Equal(problems, want) {
		t.Errorf("b: helm %v, problems %q; want helm false, %q", helm, problems, want)
	}
}

// kindLayout parses (no type checking) the Go files of one kind's package
// directory, tests left out, and lists where they depart from the layout
// (TestEveryKindHasTheSameLayout), sorted. helm is whether the package is a
// Helm kind: it defines type Kind with a method Gather.
func kindLayout(dir string) (problems []string, helm bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	// decls maps "Kind.Name" (a method of Kind), "func Name" and "type Name"
	// to the file that declares it.
	decls := map[string]string{}
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, false, err
		}
		files[name] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					decls["func "+d.Name.Name] = name
				} else if receiver(d) == "Kind" {
					decls["Kind."+d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						decls["type "+ts.Name.Name] = name
					}
				}
			}
		}
	}

	// Every kind: the package comment in doc.go, and only there.
	if doc, ok := files["doc.go"]; !ok {
		problems = append(problems, "doc.go is missing: write the package comment there")
	} else {
		if doc.Doc == nil {
			problems = append(problems, "doc.go has no package comment: write it there")
		}
		if len(doc.Decls) > 0 {
			problems = append(problems, "doc.go declares more than the package: move its declarations to the file of their step")
		}
	}
	for name, f := range files {
		if name != "doc.go" && f.Doc != nil {
			problems = append(problems, name+" has a package comment: move it to doc.go")
		}
	}

	_, hasKind := decls["type Kind"]
	_, hasGather := decls["Kind.Gather"]
	helm = hasKind && hasGather
	if helm {
		for _, w := range []struct {
			decl, file string
			optional   bool
		}{
			{decl: "type Kind", file: "kind.go"},
			{decl: "Kind.Meta", file: "kind.go"},
			{decl: "func Meta", file: "kind.go"},
			{decl: "Kind.Values", file: "kind.go"},
			{decl: "Kind.Conditions", file: "kind.go"},
			{decl: "type Inputs", file: "inputs.go"},
			{decl: "Kind.Gather", file: "inputs.go"},
			{decl: "Kind.OfflineInputs", file: "inputs.go", optional: true},
			{decl: "func computeStatus", file: "status.go"},
			{decl: "Kind.Status", file: "status.go"},
		} {
			what := w.decl
			if strings.HasPrefix(what, "Kind.") {
				what = "method " + what
			}
			switch got, ok := decls[w.decl]; {
			case !ok && !w.optional:
				problems = append(problems, what+" is not declared: declare it in "+w.file)
			case ok && got != w.file:
				problems = append(problems, what+" is in "+got+": move it to "+w.file)
			}
		}
		for _, name := range []string{"names.go", "values.go", "settings.go", "rbac.go"} {
			if _, ok := files[name]; !ok {
				problems = append(problems, name+" is missing: "+layoutFiles[name])
			}
		}
	}
	slices.Sort(problems)
	return problems, helm, nil
}

// layoutFiles says what the layout's files other than the steps' hold.
var layoutFiles = map[string]string{
	"names.go":    "the Helm kinds keep their release prefix, chart and child names in it",
	"values.go":   "the Helm kinds keep their translation into the chart's values in it",
	"settings.go": "the Helm kinds keep the operator's settings they read in it",
	"rbac.go":     "the Helm kinds keep their kubebuilder RBAC markers in it",
}

// receiver is the name of a method's receiver type, without its pointer
// and type parameters.
func receiver(d *ast.FuncDecl) string {
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
