// Command opm-render renders a bundle directory into its file-based catalog
// bundle the way `opm render <bundle-dir>` does (operator-registry's
// alpha/action.Render, no migration and no image template) and prints it as
// YAML. Nothing is pulled. The bundle's manifests become olm.bundle.object
// properties and its image is empty: OLM v0 then installs from the objects
// the catalog serves (its resolver makes steps of them) instead of running a
// Job to unpack a bundle image, and its package server reads the CSV from
// them.
//
//	opm-render <bundle directory>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/sirupsen/logrus"
)

// noRegistry refuses every pull: a bundle directory needs none.
type noRegistry struct{}

var errNoPull = errors.New("opm-render pulls nothing")

func (noRegistry) Pull(context.Context, image.Reference) error           { return errNoPull }
func (noRegistry) Unpack(context.Context, image.Reference, string) error { return errNoPull }
func (noRegistry) Labels(context.Context, image.Reference) (map[string]string, error) {
	return nil, errNoPull
}
func (noRegistry) Destroy() error { return nil }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: opm-render <bundle directory>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	// Its notes on optional files a bundle may lack are not ours to print.
	logrus.SetLevel(logrus.WarnLevel)
	cfg, err := action.Render{
		Refs:           []string{dir},
		Registry:       noRegistry{},
		AllowedRefMask: action.RefBundleDir,
	}.Run(context.Background())
	if err != nil {
		return err
	}
	if len(cfg.Bundles) != 1 {
		return fmt.Errorf("%s rendered %d bundles, want 1", dir, len(cfg.Bundles))
	}
	return declcfg.WriteYAML(*cfg, os.Stdout)
}
