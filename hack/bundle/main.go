// Command bundle writes the OLM bundle (bundle/, bundle.Dockerfile) and the
// file-based catalog (catalog/, catalog.Dockerfile) from config/, or with
// -check reports whether the committed ones are stale.
//
//	go run ./hack/bundle -version 0.1.0 [-image ...] [-check]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
)

func main() {
	version := flag.String("version", "", "the bundle's semantic version (the VERSION file)")
	image := flag.String("image", "", "the manager's image (quay.io/ai-stack-operator/ai-stack-operator:v<version> when empty)")
	check := flag.Bool("check", false, "write nothing; fail when the files on disk differ")
	flag.Parse()
	if err := run(olm.Options{Root: ".", Version: *version, Image: *image, RelatedImages: operator.RelatedImages()}, *check); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(o olm.Options, check bool) error {
	files, err := olm.Generate(o)
	if err != nil {
		return err
	}
	// Files of bundle/manifests that the generator no longer writes go.
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
	}
	stale, _ := filepath.Glob("bundle/manifests/*")
	more, _ := filepath.Glob(olm.CatalogDir + "/*/*")
	stale = append(stale, more...)
	var drift []string
	for _, p := range stale {
		// The bundles operator-registry rendered (make bundle; earlier
		// releases' stay as rendered) are not this generator's.
		if strings.HasPrefix(filepath.Base(p), "bundle-v") && filepath.Dir(filepath.Dir(p)) == olm.CatalogDir {
			continue
		}
		if !want[p] {
			drift = append(drift, p+" (no longer generated)")
			if !check {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
	}
	for _, f := range files {
		have, err := os.ReadFile(f.Path)
		if err == nil && bytes.Equal(have, f.Data) {
			continue
		}
		drift = append(drift, f.Path)
		if check {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f.Path, f.Data, 0o644); err != nil {
			return err
		}
	}
	if check && len(drift) > 0 {
		return fmt.Errorf("stale: %v", drift)
	}
	return nil
}
