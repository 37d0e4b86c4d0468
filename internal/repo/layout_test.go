package repo

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kindsPath is the import path under which each kind has its package.
const kindsPath = "github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/"

// A kind package imports no other kind package (DESIGN.md's layout):
// editing one kind then cannot break another. What kinds share lives in
// packages of its own (pkg/trustyaifamily for the TrustyAI family).
func TestNoKindImportsAnotherKind(t *testing.T) {
	crossings, err := kindCrossings(filepath.Join(root, "pkg", "kinds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crossings {
		t.Errorf("%s imports another kind's package: move what they share out of the kinds", c)
	}
}

// The check finds a kind that imports another, in code and in tests, and
// lets a kind import its own subpackages.
func TestKindCrossingsAreFound(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) { writeFile(t, dir, rel, src) }
	write("a/a.go", "package a\nimport _ \""+kindsPath+"a/sub\"\n")
	write("a/sub/sub.go", "package sub\n")
	write("b/b.go", "package b\nimport (\n\t\"fmt\"\n\t_ \""+kindsPath+"a\"\n)\nvar _ = fmt.Sprint\n")
	write("c/c_test.go", "package c\nimport _ \""+kindsPath+"b/x\"\n")
	got, err := kindCrossings(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"b/b.go -> " + kindsPath + "a", "c/c_test.go -> " + kindsPath + "b/x"}
	if !slices.Equal(got, want) {
		t.Errorf("crossings %q, want %q", got, want)
	}
}

// kindCrossings lists, for every Go file under kinds (one directory per
// kind), each import of another kind's package, as "file -> import".
func kindCrossings(kinds string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(kinds, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, err := filepath.Rel(kinds, path)
		if err != nil {
			return err
		}
		kind := strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			other, ok := strings.CutPrefix(p, kindsPath)
			if ok && strings.SplitN(other, "/", 2)[0] != kind {
				out = append(out, filepath.ToSlash(rel)+" -> "+p)
			}
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// writeFile writes src to dir/rel, making its folders: a package for a
// checker to find a problem in.
func writeFile(t *testing.T, dir, rel, src string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
