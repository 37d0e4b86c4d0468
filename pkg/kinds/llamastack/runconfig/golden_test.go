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
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// samplePath is the example CR using spec.server.config.
const samplePath = "../../../../config/samples/llamastack_v1alpha1_llamastackdistribution_config.yaml"

// goldenTargets are the server versions every golden case is rendered for:
// the 0.2 layout, the first storage layout (image_name, telemetry) and the
// newest (distro_name, responses).
var goldenTargets = []string{"0.2.23", "0.3.0", "0.7.1"}

// TestGolden renders each testdata/<case>.input.yaml (the contents of
// spec.server.config) for the image starter:<version> of each goldenTargets
// and compares it with testdata/<case>.v<version>.golden.yaml; a config the
// version cannot read is refused, and the golden file holds the error.
// go test ./pkg/kinds/llamastack/runconfig -update rewrites the golden files.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		src, err := os.ReadFile(in)
		require.NoError(t, err)
		for _, version := range goldenTargets {
			t.Run(name+"@"+version, func(t *testing.T) {
				out, err := Render(parseConfig(t, string(src)), Options{
					ImageName: "starter", Image: "docker.io/llamastack/distribution-starter:" + version, Port: 8321,
				})
				if err != nil {
					var f *status.Failure
					require.ErrorAs(t, err, &f, "only field errors are expected")
					out = []byte("error: " + f.Error() + "\n")
				}
				compareGolden(t, filepath.Join("testdata", name+".v"+version+".golden.yaml"), out)
			})
		}
	}
}

// TestGoldenSample renders the sample CR for its distribution's image, so
// that the sample stays valid for the server it starts.
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
	image, err := distributions.Default().Image(cr.Spec.Server.Distribution.Name)
	require.NoError(t, err)
	out, err := Render(cr.Spec.Server.Config, Options{
		ImageName: cr.Spec.Server.Distribution.Name,
		Image:     image,
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
