package runconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// FuzzRender feeds arbitrary typed configurations (JSON of spec.server.config,
// seeded with the sample's) to the run.yaml emitter: it never panics; it
// either refuses with a *status.Failure naming a field, or writes YAML that
// parses into a mapping, the same bytes twice.
func FuzzRender(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "config", "samples", "llamastack_v1alpha1_llamastackdistribution_config.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	cr := v1alpha1.LlamaStackDistribution{}
	if err := yaml.Unmarshal(b, &cr); err != nil || cr.Spec.Server.Config == nil {
		f.Fatalf("the config sample: %v", err)
	}
	seed, _ := json.Marshal(cr.Spec.Server.Config)
	f.Add(seed, "starter", int32(8321))
	f.Add([]byte(`{}`), "x", int32(0))
	f.Add(seed, "quay.io/me/llama:0.2.23", int32(8321))
	f.Add(seed, "registry:5000/llama@sha256:0123", int32(8321))
	f.Add([]byte(`{"serverVersion":"0.3.0","providers":{"telemetry":[{"providerId":"t","providerType":"inline::meta-reference"}]},"metadataStore":{"type":"redis","host":"r","namespace":"n"}}`), "starter", int32(8321))
	f.Add([]byte(`{"providers":{"inference":[{"providerID":"a","providerType":"remote::vllm","config":{"url":"http://x","k":{"n":[1,2,{"z":null}]}}}]},"overrides":{"server":{"port":1}}}`), "remote-vllm", int32(65535))
	f.Fuzz(func(t *testing.T, cfgJSON []byte, image string, port int32) {
		cfg := &v1alpha1.ServerConfig{}
		if err := json.Unmarshal(cfgJSON, cfg); err != nil || image == "" {
			return
		}
		out, err := Render(cfg, Options{ImageName: image, Image: image, Port: port})
		if err != nil {
			var failure *status.Failure
			if !errors.As(err, &failure) {
				t.Fatalf("an error a user cannot act on: %v", err)
			}
			return
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("run.yaml does not parse: %v\n%s", err, out)
		}
		again, err := Render(cfg, Options{ImageName: image, Image: image, Port: port})
		if err != nil || string(again) != string(out) {
			t.Fatalf("not deterministic: %v", err)
		}
	})
}
