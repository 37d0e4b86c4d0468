package configgen

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Files of a golden case, testdata/<case>/.
const (
	specFile    = "spec.yaml"      // the OGXServer's spec
	baseFile    = "base.yaml"      // the base config
	wantFile    = "want.yaml"      // the config, byte for byte
	wantMeta    = "want-meta.yaml" // env vars and counts
	wantErrFile = "want-err.txt"   // the failure, "field: message"
)

// TestGolden generates each testdata/<case> and compares with its want
// files. go test ./pkg/kinds/ogx/configgen -update rewrites them.
func TestGolden(t *testing.T) {
	dirs, err := os.ReadDir("testdata")
	require.NoError(t, err)
	n := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "fuzz" {
			continue
		}
		n++
		dir := filepath.Join("testdata", d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			in := loadCase(t, dir)
			out, err := Generate(in)
			if err != nil {
				var f *status.Failure
				require.True(t, errors.As(err, &f), "only *status.Failure errors are expected, got %T: %v", err, err)
				assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
				assert.NotEmpty(t, f.Field, "a failure names the field to fix")
				compareGolden(t, filepath.Join(dir, wantErrFile), []byte(f.Error()+"\n"))
				absent(t, filepath.Join(dir, wantFile), filepath.Join(dir, wantMeta))
				return
			}
			compareGolden(t, filepath.Join(dir, wantFile), out.Config)
			compareGolden(t, filepath.Join(dir, wantMeta), metaYAML(t, out))
			absent(t, filepath.Join(dir, wantErrFile))
			checkEnvReferences(t, out)
		})
	}
	require.GreaterOrEqual(t, n, 10, "golden cases are missing")
}

// loadCase reads a case's spec and base; DistroName is what the caller
// passes: the distribution's name, else its image.
func loadCase(t *testing.T, dir string) Input {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, specFile))
	require.NoError(t, err)
	var spec v1beta1.OGXServerSpec
	require.NoError(t, yaml.UnmarshalStrict(raw, &spec), "spec.yaml")
	base, err := os.ReadFile(filepath.Join(dir, baseFile))
	require.NoError(t, err)
	distro := spec.Distribution.Name
	if distro == "" {
		distro = spec.Distribution.Image
	}
	return Input{Spec: &spec, Base: base, DistroName: distro}
}

// metaYAML is the golden form of Output's fields other than Config.
func metaYAML(t *testing.T, out Output) []byte {
	t.Helper()
	type env struct {
		Name   string `json:"name"`
		Secret string `json:"secret"`
		Key    string `json:"key"`
	}
	meta := struct {
		Providers     int    `json:"providers"`
		Resources     int    `json:"resources"`
		ConfigVersion int    `json:"configVersion"`
		Env           []env  `json:"env"`
		Prelude       string `json:"prelude,omitempty"`
	}{Providers: out.Providers, Resources: out.Resources, ConfigVersion: out.ConfigVersion, Env: []env{}, Prelude: out.Prelude}
	for _, e := range out.Env {
		require.NotNil(t, e.ValueFrom)
		require.NotNil(t, e.ValueFrom.SecretKeyRef)
		meta.Env = append(meta.Env, env{Name: e.Name, Secret: e.ValueFrom.SecretKeyRef.Name, Key: e.ValueFrom.SecretKeyRef.Key})
	}
	b, err := yaml.Marshal(meta)
	require.NoError(t, err)
	return b
}

// ogxRef is a config's reference to a generated variable.
var ogxRef = regexp.MustCompile(`\$\{env\.(OGX_[A-Z0-9_]+)\}`)

// checkEnvReferences checks that the config reads exactly the variables of
// Env, those the Prelude reads replaced by those it sets (the test bases
// reference no OGX_ variables of their own), that Env is sorted without
// repeats, and that the config is YAML.
func checkEnvReferences(t *testing.T, out Output) {
	t.Helper()
	refs := map[string]bool{}
	for _, m := range ogxRef.FindAllStringSubmatch(string(out.Config), -1) {
		refs[m[1]] = true
	}
	var want []string
	for name := range refs {
		want = append(want, name)
	}
	sort.Strings(want)
	var got []string
	for _, e := range out.Env {
		if out.Prelude != "" && e.Name == envSQLConnectionString {
			continue
		}
		got = append(got, e.Name)
	}
	if out.Prelude != "" {
		got = append(got, postgresPreludeVars...)
		sort.Strings(got)
	}
	assert.Equal(t, want, got, "the config's ${env.OGX_...} references and Env differ")
	assert.True(t, sort.SliceIsSorted(out.Env, func(i, j int) bool { return out.Env[i].Name < out.Env[j].Name }))
	var doc map[string]any
	require.NoError(t, yamlv3.Unmarshal(out.Config, &doc))
	assert.NotEmpty(t, doc["version"])
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./pkg/kinds/ogx/configgen -update")
	assert.Equal(t, string(want), string(got), "run go test ./pkg/kinds/ogx/configgen -update if the change is intended")
}

// absent checks that the files of the other outcome do not exist (and
// removes them with -update).
func absent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if *update {
			_ = os.Remove(p)
			continue
		}
		_, err := os.Stat(p)
		assert.True(t, os.IsNotExist(err), "%s exists but the case gives the other outcome", p)
	}
}
