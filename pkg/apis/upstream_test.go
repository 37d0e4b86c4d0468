// Package apis_test checks the CRDs against the upstream operators' APIs.
package apis_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// schema is the part of an OpenAPI schema the comparison reads.
type schema struct {
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Default    any                `json:"default"`
	Type       string             `json:"type"`
}

// fields lists a CRD's spec fields, per version, as "version path type
// [default=JSON]".
func fields(t *testing.T, crdFile string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema *schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(version, path string, s *schema)
	walk = func(version, path string, s *schema) {
		if s == nil {
			return
		}
		line := version + " " + path + " " + s.Type
		if s.Default != nil {
			b, _ := json.Marshal(s.Default)
			line += " default=" + string(b)
		}
		out[strings.TrimSpace(line)] = true
		for k, v := range s.Properties {
			walk(version, path+"."+k, v)
		}
		walk(version, path+"[]", s.Items)
	}
	for _, v := range crd.Spec.Versions {
		walk(v.Name, "spec", v.Schema.OpenAPIV3Schema.Properties["spec"])
	}
	return out
}

// Every spec field of the upstream operators' CRDs is in ours, with the same
// type and default: a manifest written for upstream means the same here.
// (Ours may add fields and validation; docs/compatibility.md lists them.)
func TestUpstreamFieldsAndDefaults(t *testing.T) {
	for upstream, ours := range map[string]string{
		"upstream-llamastackdistributions.txt": "llamastack.io_llamastackdistributions.yaml",
		"upstream-trustyaiservices.txt":        "trustyai.opendatahub.io_trustyaiservices.yaml",
	} {
		have := fields(t, filepath.Join("..", "..", "config", "crd", "bases", ours))
		f, err := os.Open(filepath.Join("testdata", upstream))
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			n++
			if !have[line] {
				missing = append(missing, line)
			}
		}
		f.Close()
		if n == 0 {
			t.Fatalf("%s lists no field", upstream)
		}
		sort.Strings(missing)
		for _, m := range missing {
			t.Errorf("%s: upstream's %q is not in ours with that type and default", ours, m)
		}
	}
}
