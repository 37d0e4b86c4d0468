// Command installer prints (or writes with -o) the operator's installation
// without OLM: config/default built by kustomize with the manager's image
// set (pkg/olm.Installer). `make build-installer` and `make deploy` run it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
)

func main() {
	image := flag.String("image", "", "the operator's image (IMG)")
	out := flag.String("o", "", "file to write; standard output when empty")
	flag.Parse()
	if *image == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: installer -image IMG [-o FILE]")
		os.Exit(2)
	}
	b, err := olm.Installer(".", *image)
	if err == nil && *out != "" {
		if err = os.MkdirAll(filepath.Dir(*out), 0o755); err == nil {
			err = os.WriteFile(*out, b, 0o644)
		}
	} else if err == nil {
		_, err = os.Stdout.Write(b)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
