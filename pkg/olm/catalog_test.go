package olm

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// fbc is one declarative-config document, with the fields OLM's schemas
// define for olm.package, olm.channel and olm.bundle.
type fbc struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	Package        string `json:"package"`
	DefaultChannel string `json:"defaultChannel"`
	Description    string `json:"description"`
	Icon           *struct {
		Data      string `json:"base64data"`
		MediaType string `json:"mediatype"`
	} `json:"icon"`
	Entries []struct {
		Name      string   `json:"name"`
		Replaces  string   `json:"replaces"`
		Skips     []string `json:"skips"`
		SkipRange string   `json:"skipRange"`
	} `json:"entries"`
	Image      string `json:"image"`
	Properties []struct {
		Type  string         `json:"type"`
		Value map[string]any `json:"value"`
	} `json:"properties"`
	RelatedImages []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"relatedImages"`
}

// The file-based catalog follows operator-registry's declarative-config
// rules, checked here by our own test beside operator-registry's own
// validation (TestCatalogPassesOperatorRegistryValidation), with messages of
// ours: known schemas, strict fields, one package whose
// default channel exists, channel entries that name bundles of the package,
// a bundle with its image, an olm.package property matching its name and
// version, an olm.gvk for every API the CSV owns, valid skipRanges, and
// unique names.
func TestCatalogValidates(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, CatalogDir, Package, "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 2, "catalog.yaml and the bundle of each release")
	var docs []fbc
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, raw := range bytes.Split(bytes.TrimPrefix(b, []byte("---\n")), []byte("\n---\n")) {
			var d fbc
			require.NoError(t, yaml.Unmarshal(raw, &d), "%s", raw)
			docs = append(docs, d)
		}
	}
	var pkgs, channels, bundles []fbc
	for _, d := range docs {
		switch d.Schema {
		case "olm.package":
			pkgs = append(pkgs, d)
		case "olm.channel":
			channels = append(channels, d)
		case "olm.bundle":
			bundles = append(bundles, d)
		default:
			t.Errorf("unknown schema %q", d.Schema)
		}
	}
	require.Len(t, pkgs, 1)
	assert.Equal(t, Package, pkgs[0].Name)
	require.NotNil(t, pkgs[0].Icon)
	assert.Equal(t, "image/svg+xml", pkgs[0].Icon.MediaType)

	bundleNames := map[string]fbc{}
	for _, bd := range bundles {
		assert.Equal(t, Package, bd.Package)
		_, dup := bundleNames[bd.Name]
		assert.False(t, dup, "bundle %s twice", bd.Name)
		bundleNames[bd.Name] = bd
	}
	channelNames := map[string]bool{}
	for _, c := range channels {
		assert.Equal(t, Package, c.Package)
		assert.False(t, channelNames[c.Name], "channel %s twice", c.Name)
		channelNames[c.Name] = true
		require.NotEmpty(t, c.Entries)
		for _, e := range c.Entries {
			_, ok := bundleNames[e.Name]
			assert.True(t, ok, "channel %s names bundle %s, which the catalog lacks", c.Name, e.Name)
			if e.SkipRange != "" {
				_, err := semver.ParseRange(e.SkipRange)
				assert.NoError(t, err, "skipRange %q", e.SkipRange)
			}
		}
	}
	assert.True(t, channelNames[pkgs[0].DefaultChannel], "the default channel %q exists", pkgs[0].DefaultChannel)

	csv := committedCSV(t)
	bd, ok := bundleNames[csv.Name]
	require.True(t, ok, "the catalog has the bundle of the CSV")
	assert.Equal(t, bundleImage(csv.Spec.Version.String()), bd.Image, "the bundle image make bundle-build builds")
	gvks := map[string]bool{}
	for _, p := range bd.Properties {
		switch p.Type {
		case "olm.package":
			assert.Equal(t, map[string]any{"packageName": Package, "version": csv.Spec.Version.String()}, p.Value)
		case "olm.gvk":
			gvks[p.Value["group"].(string)+"/"+p.Value["version"].(string)+"/"+p.Value["kind"].(string)] = true
		}
	}
	for _, want := range []string{"llamastack.io/v1alpha1/LlamaStackDistribution", "trustyai.opendatahub.io/v1/TrustyAIService", "trustyai.opendatahub.io/v1alpha1/TrustyAIService"} {
		assert.True(t, gvks[want], "olm.gvk %s", want)
	}
	images := map[string]bool{}
	for _, r := range bd.RelatedImages {
		images[r.Image] = true
	}
	for _, r := range csv.Spec.RelatedImages {
		assert.True(t, images[r.Image], "related image %s", r.Image)
	}
}

// operator-registry's own validation (what `opm validate catalog` runs),
// built as a pinned tool by hack/tools.sh (hack/tools/opm-validate), also
// passes; and it can fail: a catalog whose channel names a bundle it lacks
// is refused.
func TestCatalogPassesOperatorRegistryValidation(t *testing.T) {
	bin := filepath.Join(root, "bin", "opm-validate")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run hack/tools.sh (make test does) to build operator-registry's validation", err)
	}
	out, err := exec.Command(bin, filepath.Join(root, CatalogDir)).CombinedOutput()
	require.NoError(t, err, "opm validate: %s", out)

	broken := t.TempDir()
	b, err := os.ReadFile(filepath.Join(root, CatalogDir, Package, "catalog.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(broken, Package), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(broken, Package, "catalog.yaml"), bytes.ReplaceAll(b, []byte("- name: "+Package+".v"), []byte("- name: "+Package+".v9")), 0o644))
	out, err = exec.Command(bin, broken).CombinedOutput()
	assert.Error(t, err, "a channel entry without its bundle is refused: %s", out)
	t.Logf("opm validate on a broken catalog: %s", bytes.TrimSpace(out))
}

// servedPackage is a package as bin/opm-query prints it.
type servedPackage struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Channels       []struct {
		Name   string `json:"name"`
		Head   string `json:"head"`
		Bundle struct {
			Name         string   `json:"name"`
			CSVJSONBytes int      `json:"csvJsonBytes"`
			Image        string   `json:"image"`
			Objects      []string `json:"objects"`
			CSVName      string   `json:"csvName"`
			InstallModes []string `json:"installModes"`
			Error        string   `json:"error"`
		} `json:"bundle"`
	} `json:"channels"`
	Entries []struct {
		Channel, Name, Replaces, SkipRange string
	} `json:"entries"`
}

// opmQuery reads a catalog directory through operator-registry's own cache,
// as `opm serve` serves it to OLM (bin/opm-query, hack/tools/opm-validate/query).
func opmQuery(t *testing.T, dir string) []servedPackage {
	t.Helper()
	bin := filepath.Join(root, "bin", "opm-query")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run hack/tools.sh opm (make test does)", err)
	}
	out, err := exec.Command(bin, dir).Output()
	require.NoError(t, err, "opm-query %s", dir)
	var pkgs []servedPackage
	require.NoError(t, json.Unmarshal(out, &pkgs), "%s", out)
	return pkgs
}

// Read as OLM reads it (operator-registry's cache behind `opm serve`), the
// catalog lists the package with its channel, whose head is the newest
// release with its whole CSV (what the package server needs to list the
// channel; the catalog as it was, a bundle image without objects, gives an
// empty CSV), every object of bundle/manifests and the bundle image (which
// OLM v1 pulls and OLM v0 unpacks; served without one, OLM v0 makes its
// install steps of the objects: test/olm), and every release of
// config/catalog/releases.yaml in the channel.
func TestCatalogAsOLMReadsIt(t *testing.T) {
	pkgs := opmQuery(t, filepath.Join(root, CatalogDir))
	require.Len(t, pkgs, 1)
	p := pkgs[0]
	assert.Equal(t, Package, p.Name)
	assert.Equal(t, Channel, p.DefaultChannel)
	require.Len(t, p.Channels, 1)
	csv := committedCSV(t)
	head := p.Channels[0]
	assert.Equal(t, csv.Name, head.Head)
	assert.Empty(t, head.Bundle.Error)
	assert.Greater(t, head.Bundle.CSVJSONBytes, 10000, "the CSV is served whole")
	assert.Equal(t, csv.Name, head.Bundle.CSVName)
	assert.ElementsMatch(t, []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}, head.Bundle.InstallModes)
	assert.Equal(t, bundleImage(csv.Spec.Version.String()), head.Bundle.Image, "OLM v1 pulls the bundle image")
	assert.ElementsMatch(t, bundleObjects(t), head.Bundle.Objects, "the catalog serves every object of bundle/manifests")

	raw, err := os.ReadFile(filepath.Join(root, ReleasesFile))
	require.NoError(t, err)
	var rel releases
	require.NoError(t, yaml.UnmarshalStrict(raw, &rel))
	require.Len(t, p.Entries, len(rel.Releases), "every release stays in the channel")
	byName := map[string]string{}
	for _, e := range p.Entries {
		byName[e.Name] = e.Replaces
		assert.Equal(t, "<"+strings.TrimPrefix(e.Name, Package+".v"), e.SkipRange)
	}
	for i, v := range rel.Releases {
		replaces, ok := byName[Package+".v"+v]
		require.True(t, ok, "release %s in the channel", v)
		if i > 0 {
			assert.Equal(t, Package+".v"+rel.Releases[i-1], replaces, "the upgrade edge of %s", v)
		}
	}
}

// The catalog as it was before (the olm.bundle with a bundle image and
// neither objects nor olm.csv.metadata) is what OLM lists with an empty CSV:
// the reading above fails on it.
func TestCatalogWithoutObjectsIsEmptyToOLM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), Package)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	cat, err := os.ReadFile(filepath.Join(root, CatalogDir, Package, "catalog.yaml"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, BundleFile(committedCSV(t).Spec.Version.String())))
	require.NoError(t, err)
	stripped := stripObjects(t, string(b))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.yaml"), cat, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(stripped), 0o644))
	pkgs := opmQuery(t, filepath.Dir(dir))
	require.Len(t, pkgs, 1)
	assert.Equal(t, 0, pkgs[0].Channels[0].Bundle.CSVJSONBytes)
	assert.NotEmpty(t, pkgs[0].Channels[0].Bundle.Error)
}

// bundleImage is the bundle image of a version, as make bundle-build tags it
// (BUNDLE_IMG's default).
func bundleImage(version string) string {
	return "quay.io/ai-stack-operator/ai-stack-operator-bundle:v" + version
}

// stripObjects turns a rendered bundle into the old shape: its
// olm.bundle.object properties removed, only the bundle image left.
func stripObjects(t *testing.T, doc string) string {
	t.Helper()
	var b map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &b))
	props := b["properties"].([]any)
	var kept []any
	for _, p := range props {
		if p.(map[string]any)["type"] != "olm.bundle.object" {
			kept = append(kept, p)
		}
	}
	require.Less(t, len(kept), len(props), "the rendered bundle has olm.bundle.object")
	b["properties"] = kept
	require.Equal(t, bundleImage(committedCSV(t).Spec.Version.String()), b["image"])
	out, err := yaml.Marshal(b)
	require.NoError(t, err)
	return string(out)
}

// bundleObjects lists bundle/manifests as kind/name.
func bundleObjects(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "bundle", "manifests", "*.yaml"))
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(raw, &meta), f)
		out = append(out, meta.Kind+"/"+meta.Metadata.Name)
	}
	require.Len(t, out, 37)
	return out
}

// The committed bundle of the current version is what operator-registry
// renders from bundle/ now (`make bundle` regenerates it).
func TestRenderedBundleUpToDate(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join(root, "bin", "opm-render"))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run hack/tools.sh opm (make test does)", err)
	}
	csv := committedCSV(t)
	cmd := exec.Command(bin, "-image", bundleImage(csv.Spec.Version.String()), "bundle")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	committed, err := os.ReadFile(filepath.Join(root, BundleFile(csv.Spec.Version.String())))
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(out), "stale: run make bundle")
}
