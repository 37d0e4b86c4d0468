// Command opm-query reads a file-based catalog directory the way OLM's
// catalog pods serve it (`opm serve`: operator-registry's pkg/cache, built
// from the catalog) and prints, as JSON, what OLM's package server and
// resolver ask of it: each package's channels with their heads, and each
// head's bundle as the registry API returns it (its CSV, decoded), and the
// channel entries with their upgrade edges. The catalog test in pkg/olm
// runs it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/pkg/cache"
)

type bundle struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	CSVJSONBytes int    `json:"csvJsonBytes"`
	// Image is the bundle image OLM v0 would unpack with a Job; empty when
	// the catalog serves the bundle's objects.
	Image string `json:"image"`
	// Objects are the served objects as kind/name.
	Objects []string `json:"objects"`
	// CSVName and InstallModes come from decoding the CSV the API returns.
	CSVName      string   `json:"csvName"`
	InstallModes []string `json:"installModes"`
	Error        string   `json:"error,omitempty"`
}

type channel struct {
	Name   string `json:"name"`
	Head   string `json:"head"`
	Bundle bundle `json:"bundle"`
}

type entry struct {
	Channel   string `json:"channel"`
	Name      string `json:"name"`
	Replaces  string `json:"replaces,omitempty"`
	SkipRange string `json:"skipRange,omitempty"`
}

type pkg struct {
	Name           string    `json:"name"`
	DefaultChannel string    `json:"defaultChannel"`
	Channels       []channel `json:"channels"`
	Entries        []entry   `json:"entries"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: opm-query <catalog directory>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "opm-query-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c, err := cache.New(tmp)
	if err != nil {
		return err
	}
	if err := c.Build(ctx, os.DirFS(dir)); err != nil {
		return fmt.Errorf("build the cache: %w", err)
	}
	if err := c.Load(ctx); err != nil {
		return fmt.Errorf("load the cache: %w", err)
	}
	names, err := c.ListPackages(ctx)
	if err != nil {
		return err
	}
	var out []pkg
	for _, name := range names {
		p, err := c.GetPackage(ctx, name)
		if err != nil {
			return err
		}
		o := pkg{Name: p.PackageName, DefaultChannel: p.DefaultChannelName}
		for _, ch := range p.Channels {
			oc := channel{Name: ch.Name, Head: ch.CurrentCSVName}
			b, err := c.GetBundleForChannel(ctx, name, ch.Name)
			if err != nil {
				oc.Bundle.Error = err.Error()
			} else {
				oc.Bundle = bundle{Name: b.CsvName, Version: b.Version, CSVJSONBytes: len(b.CsvJson), Image: b.BundlePath}
				for _, o := range b.Object {
					var meta struct {
						Kind     string `json:"kind"`
						Metadata struct {
							Name string `json:"name"`
						} `json:"metadata"`
					}
					if err := json.Unmarshal([]byte(o), &meta); err != nil {
						return fmt.Errorf("decode an object of %s: %w", b.CsvName, err)
					}
					oc.Bundle.Objects = append(oc.Bundle.Objects, meta.Kind+"/"+meta.Metadata.Name)
				}
				var csv struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
					Spec struct {
						InstallModes []struct {
							Type      string `json:"type"`
							Supported bool   `json:"supported"`
						} `json:"installModes"`
					} `json:"spec"`
				}
				if err := json.Unmarshal([]byte(b.CsvJson), &csv); err != nil {
					oc.Bundle.Error = "decode the CSV: " + err.Error()
				} else {
					oc.Bundle.CSVName = csv.Metadata.Name
					for _, m := range csv.Spec.InstallModes {
						if m.Supported {
							oc.Bundle.InstallModes = append(oc.Bundle.InstallModes, m.Type)
						}
					}
				}
			}
			o.Channels = append(o.Channels, oc)
		}
		bundles, err := c.ListBundles(ctx)
		if err != nil {
			return err
		}
		for _, b := range bundles {
			if b.PackageName == name {
				o.Entries = append(o.Entries, entry{Channel: b.ChannelName, Name: b.CsvName, Replaces: b.Replaces, SkipRange: b.SkipRange})
			}
		}
		out = append(out, o)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
