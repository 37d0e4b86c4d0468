// Command render prints what ai-stack-operator would apply for the CRs in a
// file, offline: the API server's admission of each CR (defaults, schema,
// CEL rules), the same translation to Helm values, the embedded charts and
// the same guard. `render -f cr.yaml`; `render -h` lists the flags.
//
// It is a binary of its own, apart from the operator's (cmd/manager): the
// API server's CRD validation it carries (k8s.io/apiextensions-apiserver,
// CEL) is about 10 MB of code the operator never runs but would map.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// errUsage: the command line was wrong; the usage has been printed.
var errUsage = errors.New("usage")

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs a command line; it returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := renderCommand(args, stdin, stdout, stderr); err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}
