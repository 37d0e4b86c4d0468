package charts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLlamaStackStartCommandFollowsTheInstalledServer runs the chart's start
// script (llsd.startWithConfig) against a stand-in installation of each
// llama-stack release: importlib finds a llama_stack of that version, and
// stand-ins for uvicorn and `python3 -m` print what they were asked to run.
// Up to 0.2.16 the server module is llama_stack.distribution.server.server
// (--config), up to 0.2.x llama_stack.core.server.server (the path), and
// from 0.3 (0.7.1 included: core/server/server.py still has the create_app
// factory, which reads LLAMA_STACK_CONFIG) uvicorn on the factory with the
// port and workers of LLAMA_STACK_PORT and LLAMA_STACK_WORKERS.
func TestLlamaStackStartCommandFollowsTheInstalledServer(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	python, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("no python3")
	}
	realPython := strings.TrimSpace(string(python))

	d := llsdDeployment(t, map[string]any{"userConfig": map[string]any{"configMapName": "mine"}})
	c := d.Spec.Template.Spec.Containers[0]
	require.Len(t, c.Command, 3)
	script := c.Command[2]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	require.Equal(t, "/etc/llama-stack/config.yaml", env["LLAMA_STACK_CONFIG"])

	const uvicorn = "uvicorn llama_stack.core.server.server:create_app --factory --host 0.0.0.0 --port 9000 --workers 3 config=/etc/llama-stack/config.yaml"
	for version, want := range map[string]string{
		"0.2.10": "python3 -m llama_stack.distribution.server.server --config /etc/llama-stack/config.yaml",
		"0.2.23": "python3 -m llama_stack.core.server.server /etc/llama-stack/config.yaml",
		"0.3.0":  uvicorn,
		"0.7.1":  uvicorn,
		"":       uvicorn, // not readable: the newest way
	} {
		t.Run("llama_stack "+version, func(t *testing.T) {
			dir := t.TempDir()
			bin, site := filepath.Join(dir, "bin"), filepath.Join(dir, "site")
			require.NoError(t, os.MkdirAll(bin, 0o755))
			if version != "" {
				info := filepath.Join(site, "llama_stack-"+version+".dist-info")
				require.NoError(t, os.MkdirAll(info, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(info, "METADATA"),
					[]byte("Metadata-Version: 2.1\nName: llama_stack\nVersion: "+version+"\n"), 0o644))
			}
			write := func(name, body string) {
				require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!"+sh+"\n"+body), 0o755))
			}
			write("uvicorn", `echo "uvicorn $* config=$LLAMA_STACK_CONFIG"`+"\n")
			write("python3", `if [ "$1" = -m ]; then echo "python3 $*"; exit 0; fi`+"\nexec "+realPython+` "$@"`+"\n")

			cmd := exec.Command(c.Command[0], c.Command[1], script)
			cmd.Env = []string{
				"PATH=" + bin + ":/usr/bin:/bin", "PYTHONPATH=" + site, "PYTHONNOUSERSITE=1",
				"LLAMA_STACK_CONFIG=" + env["LLAMA_STACK_CONFIG"], "LLAMA_STACK_PORT=9000", "LLAMA_STACK_WORKERS=3",
			}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Equal(t, want, strings.TrimSpace(string(out)))
		})
	}
}
