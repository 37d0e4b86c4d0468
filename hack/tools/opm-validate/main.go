// Command opm-validate validates a file-based catalog directory with
// operator-registry's own declarative-config validation: what
// `opm validate <dir>` runs (pkg/lib/config.Validate), without the rest of
// opm (its image and sqlite code).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/pkg/lib/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: opm-validate <catalog directory>")
		os.Exit(2)
	}
	if err := config.Validate(context.Background(), os.DirFS(os.Args[1])); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
