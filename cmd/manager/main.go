// Command manager is ai-stack-operator: `manager [run]` runs the operator,
// `manager render -f cr.yaml` prints what it would apply, offline, and
// `manager version` prints its version.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
)

const usage = `ai-stack-operator manager

Usage:
  manager [run] [flags]        run the operator against the cluster of KUBECONFIG or in-cluster config
  manager render -f FILE       print the manifests the operator would apply for the CRs in FILE, offline
  manager version              print the version

Run 'manager COMMAND -h' for the flags of a command.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main dispatches a command line; it returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = runCommand(args, stderr)
	case "render":
		err = renderCommand(args, stdin, stdout, stderr)
	case "version":
		_, err = fmt.Fprintln(stdout, version.Version)
	case "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}
