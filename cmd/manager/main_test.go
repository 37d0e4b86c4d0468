package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommands(t *testing.T) {
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"version"}, 0, "v", ""},
		{[]string{"help"}, 0, "manager [run] [flags]", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		// Earlier versions rendered here: the answer says where it went.
		{[]string{"render", "-f", "cr.yaml"}, 2, "", "go run ./cmd/render -f FILE"},
		// The switch's commands (docs/switching.md) take flags only.
		{[]string{"help"}, 0, "manager preflight [flags]", ""},
		{[]string{"preflight", "extra"}, 2, "", `preflight takes no arguments, got ["extra"]`},
		{[]string{"switch-back", "-h"}, 0, "", "-dry-run"},
		{[]string{"switch-back", "--bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"remove-finalizer"}, 2, "", "remove-finalizer: name at least one finalizer"},
		// A flag after a name would be a name: refused, never run for real.
		{[]string{"remove-finalizer", "example.com/f", "--dry-run"}, 2, "", "flags go before the finalizer names"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(c.args, &out, &errOut); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errOut.String())
		}
		if !strings.Contains(out.String(), c.stdout) || !strings.Contains(errOut.String(), c.errs) {
			t.Errorf("%v: stdout %q, stderr %q; want %q and %q", c.args, out.String(), errOut.String(), c.stdout, c.errs)
		}
	}
}
