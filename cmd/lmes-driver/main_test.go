package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopyMakesAnExecutableCopy(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "driver")
	if code := run([]string{"--copy", dest}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	st, err := os.Stat(dest)
	self, _ := os.Executable()
	want, _ := os.Stat(self)
	if err != nil || st.Mode().Perm() != 0o555 || st.Size() != want.Size() {
		t.Fatalf("copy: %v %v", st, err)
	}
}

func TestRunsTheProgramAfterTheFlags(t *testing.T) {
	dir := t.TempDir()
	out, errs := &bytes.Buffer{}, &bytes.Buffer{}
	term := filepath.Join(dir, "termination-log")
	recipe := "card=cards.wnli,template=templates.t,metrics=[metrics.a,metrics.b],num_demos=5"
	code := run([]string{
		"--output-path", filepath.Join(dir, "out"), "--task-recipes-path", dir, "--catalog-path", filepath.Join(dir, "cat"),
		"--termination-log", term, "--listen-port", "0",
		"--task-recipe", recipe, "--custom-artifact", "template|t|{\"a\": \"x|y\"}", "--task-name", "ignored",
		"--", "sh", "-c", "echo --not-a-driver-flag; exit 0",
	}, out, errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tr_0.yaml")); !strings.HasSuffix(string(b), "recipe: "+recipe) {
		t.Fatalf("recipe split at its commas: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cat", "templates", "t.json")); string(b) != `{"a": "x|y"}` {
		t.Fatalf("artifact value: %q", b)
	}
	if !strings.Contains(out.String(), "--not-a-driver-flag") {
		t.Fatalf("the program's output is not in the log: %q", out)
	}
	if b, _ := os.ReadFile(term); string(b) != `{"state":"Complete","reason":"Succeeded","message":"job completed"}` {
		t.Fatalf("termination message %q", b)
	}
	code = run([]string{"--output-path", filepath.Join(dir, "out"), "--task-recipes-path", dir, "--catalog-path", filepath.Join(dir, "cat"),
		"--termination-log", term, "--listen-port", "0", "--", "sh", "-c", "exit 4"}, out, errs)
	if b, _ := os.ReadFile(term); code != 1 || string(b) != `{"state":"Complete","reason":"Failed","message":"exit status 4"}` {
		t.Fatalf("failure: exit %d, termination message %q", code, b)
	}
}

func TestBadInvocations(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--output-path", "/x"}, 1},
		{[]string{"--bogus"}, 2},
		{[]string{"--custom-artifact", "no-bars", "--", "true"}, 2},
	} {
		if code := run(c.args, &bytes.Buffer{}, &bytes.Buffer{}); code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, code, c.code)
		}
	}
}
