// Command opm-render renders a bundle directory into its file-based catalog
// bundle the way `opm render <bundle-dir> --migrate-level=all` does
// (operator-registry's alpha/action.Render, with every migration: the CSV
// becomes an olm.csv.metadata property, which OLM's package server reads),
// with the image reference given, and prints it as YAML. Nothing is pulled.
//
//	opm-render <bundle directory> <bundle image>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/template"

	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
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
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: opm-render <bundle directory> <bundle image>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir, img string) error {
	// Its notes on optional files a bundle may lack are not ours to print.
	logrus.SetLevel(logrus.WarnLevel)
	m, err := migrations.NewMigrations(migrations.AllMigrations)
	if err != nil {
		return err
	}
	tmpl, err := template.New("image").Parse(img)
	if err != nil {
		return err
	}
	cfg, err := action.Render{
		Refs:             []string{dir},
		Registry:         noRegistry{},
		AllowedRefMask:   action.RefBundleDir,
		ImageRefTemplate: tmpl,
		Migrations:       m,
	}.Run(context.Background())
	if err != nil {
		return err
	}
	if len(cfg.Bundles) != 1 {
		return fmt.Errorf("%s rendered %d bundles, want 1", dir, len(cfg.Bundles))
	}
	return declcfg.WriteYAML(*cfg, os.Stdout)
}
