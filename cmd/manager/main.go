// Command manager is ai-stack-operator: `manager [run]` runs the operator,
// `manager preflight` says what it will do with what another operator left
// (read-only), and `manager version` prints its version. The offline
// preview of what it would apply is a binary of its own, cmd/render.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
)

const usage = `ai-stack-operator manager

Usage:
  manager [run] [flags]        run the operator against the cluster of KUBECONFIG or in-cluster config
  manager preflight [flags]    before a switch from the upstream operators: print what the operator will
                               do with each object of every CR (take over, roll out, in the way, claims);
                               reads the cluster of KUBECONFIG and changes nothing (docs/switching.md)
  manager switch-back [flags]  the way back to the upstream operators, once this one is stopped: removes
                               its finalizer from every CR, labels the CRs' objects for the upstream
                               operators, deletes what it wrote outside the CRs (docs/switching.md)
  manager remove-finalizer NAME...
                               after the switch, once the upstream operator is stopped: removes its
                               finalizers (e.g. trustyai.opendatahub.io/finalizer) from every CR
  manager version              print the version

Run 'manager COMMAND -h' for the flags of a command.
`

// renderMoved answers `manager render`, which earlier versions had.
const renderMoved = `the offline render is a binary of its own now, so that the operator does not carry
the API server's CRD validation: run "go run ./cmd/render -f FILE" in a checkout,
or "/render -f FILE" in the operator image (same flags as before)
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main dispatches a command line; it returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = runCommand(args, stderr)
	case "render":
		// It moved: say where, rather than "unknown command".
		fmt.Fprint(stderr, renderMoved)
		return 2
	case "preflight":
		err = preflightCommand(args, stdout, stderr)
	case "switch-back":
		err = switchBackCommand(args, stdout, stderr)
	case "remove-finalizer":
		err = removeFinalizerCommand(args, stdout, stderr)
	case "version":
		_, err = fmt.Fprintln(stdout, version.Version)
	case "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}
