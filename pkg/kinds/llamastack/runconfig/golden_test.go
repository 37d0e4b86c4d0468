package runconfig

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// samplePath is the example CR using spec.server.config.
const samplePath = "../../../../config/samples/llamastack_v1alpha1_llamastackdistribution_config.yaml"

// TestGolden renders each testdata/<case>.input.yaml (the contents of
// spec.server.config) and compares it with testdata/<case>.golden.yaml.
// go test ./pkg/kinds/llamastack/runconfig -update rewrites the golden files.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			require.NoError(t, err)
			out, err := Render(parseConfig(t, string(src)), Options{ImageName: "starter", Port: 8321})
			require.NoError(t, err)
			compareGolden(t, filepath.Join("testdata", name+".golden.yaml"), out)
		})
	}
}

// TestGoldenSample renders the sample CR, so that the sample stays valid.
func TestGoldenSample(t *testing.T) {
	src, err := os.ReadFile(samplePath)
	require.NoError(t, err)
	// Only the fields this package needs, so that the test does not depend on
	// the rest of the spec.
	var cr struct {
		Spec struct {
			Server struct {
				Distribution  v1alpha1.DistributionType `json:"distribution"`
				ContainerSpec struct {
					Port int32 `json:"port"`
				} `json:"containerSpec"`
				Config *v1alpha1.ServerConfig `json:"config"`
			} `json:"server"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(src, &cr))
	require.NotNil(t, cr.Spec.Server.Config, "the sample sets spec.server.config")
	out, err := Render(cr.Spec.Server.Config, Options{
		ImageName: cr.Spec.Server.Distribution.Name,
		Port:      cr.Spec.Server.ContainerSpec.Port,
	})
	require.NoError(t, err)
	compareGolden(t, filepath.Join("testdata", "sample.golden.yaml"), out)
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./pkg/kinds/llamastack/runconfig -update")
	assert.Equal(t, string(want), string(got), "run go test ./pkg/kinds/llamastack/runconfig -update if the change is intended")
}
