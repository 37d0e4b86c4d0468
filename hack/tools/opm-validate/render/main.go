// Command opm-render renders a bundle directory into its file-based catalog
// bundle the way `opm render <bundle-dir>` does (operator-registry's
// alpha/action.Render, no migration and no image template) and prints it as
// YAML. Nothing is pulled. The bundle's manifests become olm.bundle.object
// properties: OLM's package server reads the CSV from them, and an OLM v0
// given a bundle without an image installs from them with no unpack Job.
// -image names the bundle image the published bundle is pulled from (OLM v1
// pulls it; OLM v0 unpacks it), as `opm render <image>` would name it.
//
//	opm-render [-image REF] <bundle directory>
package main

import (
	"context"
	"errors"
	"flag"
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
	image := flag.String("image", "", "the bundle image the catalog names (empty: none)")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: opm-render [-image REF] <bundle directory>") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *image); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir, image string) error {
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
	cfg.Bundles[0].Image = image
	return declcfg.WriteYAML(*cfg, os.Stdout)
}
