package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// FuzzRender feeds arbitrary CR documents, seeded with every sample, through
// what the operator does to a CR (admission, translation, chart, guard): it
// never panics; a CR it accepts renders to documents that all parse, each an
// object in the CR's namespace (or in none, which Helm makes the release's). Its seeds run in every `go test`;
// `make test-fuzz` mutates for a while (FUZZTIME), longer runs are
// `go test ./cmd/render -run '^$' -fuzz FuzzRender -fuzztime 30m`.
func FuzzRender(f *testing.F) {
	samples, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*_*.yaml"))
	if err != nil || len(samples) == 0 {
		f.Fatalf("samples: %v", err)
	}
	// And the preview kinds' golden inputs (no sample of theirs ships yet).
	preview, err := filepath.Glob(filepath.Join("testdata", "lmevaljob-*.cr.yaml"))
	if err != nil || len(preview) == 0 {
		f.Fatalf("LMEvalJob inputs: %v", err)
	}
	samples = append(samples, preview...)
	for _, s := range samples {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---")) {
			f.Add(doc, false)
			f.Add(doc, true)
		}
	}
	renderers := map[bool]*renderer{}
	for _, openshift := range []bool{false, true} {
		r, err := newRenderer(renderOptions{namespace: "fuzz", operatorNamespace: "ai-stack-operator-system", openshift: openshift})
		if err != nil {
			f.Fatal(err)
		}
		renderers[openshift] = r
	}
	f.Fuzz(func(t *testing.T, doc []byte, openshift bool) {
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil || len(u.Object) == 0 {
			return
		}
		r := renderers[openshift]
		if r.watchFor(u.GroupVersionKind()) == nil {
			return
		}
		manifest, err := r.render(u)
		if err != nil {
			return // refused, with its reason: what a hostile CR should get
		}
		ns := u.GetNamespace()
		for _, d := range strings.Split(manifest, "\n---") {
			if strings.TrimSpace(d) == "" {
				continue
			}
			obj := map[string]any{}
			if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
				t.Fatalf("a rendered document does not parse: %v\n%s", err, d)
			}
			if len(obj) == 0 {
				continue // comments only
			}
			o := unstructured.Unstructured{Object: obj}
			if o.GetKind() == "" || o.GetName() == "" {
				t.Fatalf("a rendered document is not an object:\n%s", d)
			}
			// No namespace is the release's (Helm sets it), which is the CR's.
			if o.GetNamespace() != ns && o.GetNamespace() != "" {
				t.Fatalf("%s %s is in namespace %q, not the CR's %q", o.GetKind(), o.GetName(), o.GetNamespace(), ns)
			}
		}
	})
}
