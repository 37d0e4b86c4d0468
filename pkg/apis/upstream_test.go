// Package apis_test checks the CRDs against the upstream operators' APIs.
package apis_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
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

// fields lists a CRD's spec and status fields, per version, as "version
// path type [default=JSON]".
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
		for _, top := range []string{"spec", "status"} {
			walk(v.Name, top, v.Schema.OpenAPIV3Schema.Properties[top])
		}
	}
	return out
}

// Every spec field (and, where the testdata lists them, status field) of the
// upstream operators' CRDs is in ours, with the same type and default: a
// manifest written for upstream means the same here.
// (Ours may add fields and validation; docs/compatibility.md lists them.)
func TestUpstreamFieldsAndDefaults(t *testing.T) {
	for upstream, ours := range map[string]string{
		"upstream-llamastackdistributions.txt": "llamastack.io_llamastackdistributions.yaml",
		"upstream-trustyaiservices.txt":        "trustyai.opendatahub.io_trustyaiservices.yaml",
		"upstream-ogxservers.txt":              "ogx.io_ogxservers.yaml",
		"upstream-lmevaljobs.txt":              "trustyai.opendatahub.io_lmevaljobs.yaml",
		"upstream-nemoguardrails.txt":          "trustyai.opendatahub.io_nemoguardrails.yaml",
		"upstream-evalhubs.txt":                "trustyai.opendatahub.io_evalhubs.yaml",
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

// canonical is JSON with sorted keys and no HTML escaping, as the testdata
// writes it.
func canonical(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// schemaFacts states everything a CRD enforces or shows, one fact per line
// as testdata/upstream-ogxservers-schema.txt describes: resource names, scope,
// versions and subresources, printer columns in order, and per schema node
// every keyword but descriptions (CEL rules without their messages), keyed
// by the text before the JSON.
func schemaFacts(t *testing.T, crdFile string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Group    string         `json:"group"`
			Names    map[string]any `json:"names"`
			Scope    string         `json:"scope"`
			Versions []struct {
				Name         string           `json:"name"`
				Served       any              `json:"served"`
				Storage      any              `json:"storage"`
				Subresources any              `json:"subresources"`
				Columns      []map[string]any `json:"additionalPrinterColumns"`
				Schema       struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	out["crd"] = canonical(t, map[string]any{"group": crd.Spec.Group, "names": crd.Spec.Names, "scope": crd.Spec.Scope})
	var walk func(version, path string, node map[string]any)
	walk = func(version, path string, node map[string]any) {
		facts := map[string]any{}
		for k, v := range node {
			switch k {
			case "description", "properties", "items":
			case "additionalProperties":
				if b, ok := v.(bool); ok {
					facts[k] = b
				}
			case "x-kubernetes-validations":
				var rules []string
				for _, r := range v.([]any) {
					rules = append(rules, r.(map[string]any)["rule"].(string))
				}
				sort.Strings(rules)
				facts[k] = rules
			default:
				facts[k] = v
			}
		}
		key := path
		if key == "" {
			key = "."
		}
		out["node "+version+" "+key] = canonical(t, facts)
		props, _ := node["properties"].(map[string]any)
		for name, child := range props {
			walk(version, path+"."+name, child.(map[string]any))
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(version, path+"[]", items)
		}
		if extra, ok := node["additionalProperties"].(map[string]any); ok {
			walk(version, path+"{}", extra)
		}
	}
	for _, v := range crd.Spec.Versions {
		out["version "+v.Name] = canonical(t, map[string]any{"served": v.Served, "storage": v.Storage, "subresources": v.Subresources})
		for i, c := range v.Columns {
			col := map[string]any{"name": c["name"], "type": c["type"], "jsonPath": c["jsonPath"], "priority": 0}
			if p, ok := c["priority"]; ok {
				col["priority"] = p
			}
			out[fmt.Sprintf("column %s %02d", v.Name, i)] = canonical(t, col)
		}
		walk(v.Name, "", v.Schema.OpenAPIV3Schema)
	}
	return out
}

// readFacts reads a testdata file of schema facts ("key {json}" lines).
func readFacts(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	facts := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.Index(line, " {")
		if i < 0 {
			t.Fatalf("testdata line without JSON: %q", line)
		}
		facts[line[:i]] = line[i+1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return facts
}

// Our OGXServer CRD enforces and shows exactly what upstream's does: the same
// fields, types, defaults, enums, bounds, patterns, required lists, list and
// map semantics, CEL rules (our messages differ), printer columns, resource
// names and subresources. A missing, extra or different fact fails, but the
// fields of the embedded core types that our newer k8s.io/api adds, listed
// one by one (each must still be extra, with the same fact).
func TestOGXServerSchemaMatchesUpstream(t *testing.T) {
	ours := schemaFacts(t, filepath.Join("..", "..", "config", "crd", "bases", "ogx.io_ogxservers.yaml"))
	upstream := readFacts(t, "upstream-ogxservers-schema.txt")
	newer := readFacts(t, "ogxservers-newer-core-types.txt")
	if len(upstream) < 100 {
		t.Fatalf("upstream-ogxservers-schema.txt lists only %d facts", len(upstream))
	}
	keys := map[string]bool{}
	for k := range upstream {
		keys[k] = true
	}
	for k := range ours {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		up, inUp := upstream[k]
		our, inOurs := ours[k]
		switch {
		case !inOurs:
			t.Errorf("%s: upstream has %s, ours has no such node", k, up)
		case !inUp && newer[k] == our:
			// A field of a newer core type (testdata/ogxservers-newer-core-types.txt).
		case !inUp:
			t.Errorf("%s: ours has %s, upstream has no such node", k, our)
		case up != our:
			t.Errorf("%s:\n upstream %s\n ours     %s", k, up, our)
		}
	}
	for k, fact := range newer {
		if _, inUp := upstream[k]; inUp || ours[k] != fact {
			t.Errorf("%s is listed as a newer core type's field (%s), but ours has %q and upstream has it: %v", k, fact, ours[k], inUp)
		}
	}
}
