package configgen

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// FuzzGenerate feeds specs (JSON, as the API server stores them) and bases
// to Generate: it must not panic, errors must be *status.Failure, and
// output must be YAML and the same on a second run.
func FuzzGenerate(f *testing.F) {
	specs, _ := filepath.Glob(filepath.Join("testdata", "*", specFile))
	for _, path := range specs {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		spec, err := sigsyaml.YAMLToJSON(raw)
		if err != nil {
			f.Fatal(err)
		}
		base, err := os.ReadFile(filepath.Join(filepath.Dir(path), baseFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(spec, base)
	}
	f.Add([]byte(`{"providers":{"inference":{"remote":{"custom":[{"type":"remote::x","settings":{"a":[1,2.5,{"b":null}]}}]}}}}`), []byte("version: 2\n"))
	f.Add([]byte(`{"storage":{"kv":{"type":"redis","endpoint":"[::1]:6379"}}}`), []byte("version: 2\nstorage: {backends: {}}\n"))
	f.Add([]byte(`{"storage":{"sql":{"type":"postgres"}}}`), []byte("version: 2\n"))
	f.Add([]byte(`{"disabledAPIs":["inference"]}`), []byte("version: &v 2\na: *v\nb: {<<: {c: 1}}\n"))
	f.Fuzz(func(t *testing.T, specJSON, base []byte) {
		var spec v1beta1.OGXServerSpec
		if json.Unmarshal(specJSON, &spec) != nil {
			return
		}
		in := Input{Spec: &spec, Base: base, DistroName: spec.Distribution.Name}
		out, err := Generate(in)
		if err != nil {
			var failure *status.Failure
			if !errors.As(err, &failure) {
				t.Fatalf("error is not a *status.Failure: %T %v", err, err)
			}
			if failure.Field == "" || failure.Message == "" {
				t.Fatalf("failure without field or message: %#v", failure)
			}
			return
		}
		var doc map[string]any
		if err := yaml.Unmarshal(out.Config, &doc); err != nil {
			t.Fatalf("the config is not YAML: %v\n%s", err, out.Config)
		}
		again, err := Generate(in)
		if err != nil || string(again.Config) != string(out.Config) || again.Prelude != out.Prelude {
			t.Fatalf("second run differs: %v", err)
		}
		for i := 1; i < len(out.Env); i++ {
			if out.Env[i-1].Name >= out.Env[i].Name {
				t.Fatalf("env not sorted or repeated: %s, %s", out.Env[i-1].Name, out.Env[i].Name)
			}
		}
	})
}
