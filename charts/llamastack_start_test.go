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
	sh, realPython := startScriptTools(t)

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
			// A stand-in PyYAML (the images ship the real one): JSON is YAML.
			require.NoError(t, os.MkdirAll(site, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(site, "yaml.py"), []byte("import json\ndef safe_load(f):\n    return json.load(f)\n"), 0o644))
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

// From 0.3 the script starts uvicorn itself, so it passes the run
// configuration's TLS files as `llama stack run` does: HTTPS with
// server.tls_keyfile and tls_certfile, client certificates required when
// tls_cafile is set; nothing when they are not both set.
func TestLlamaStackStartCommandServesTheConfiguredTLS(t *testing.T) {
	sh, python := startScriptTools(t)
	d := llsdDeployment(t, map[string]any{"userConfig": map[string]any{"configMapName": "mine"}})
	c := d.Spec.Template.Spec.Containers[0]
	require.Len(t, c.Command, 3)
	const base = "uvicorn llama_stack.core.server.server:create_app --factory --host 0.0.0.0 --port 8321 --workers 1"
	for name, tc := range map[string]struct{ server, want string }{
		"key and certificate": {`{"tls_keyfile": "/tls/tls.key", "tls_certfile": "/tls/tls.crt"}`, base + " --ssl-keyfile /tls/tls.key --ssl-certfile /tls/tls.crt"},
		"with a CA":           {`{"tls_keyfile": "/tls/tls.key", "tls_certfile": "/tls/tls.crt", "tls_cafile": "/tls/ca.crt"}`, base + " --ssl-keyfile /tls/tls.key --ssl-certfile /tls/tls.crt --ssl-ca-certs /tls/ca.crt --ssl-cert-reqs 2"},
		"certificate alone":   {`{"tls_certfile": "/tls/tls.crt"}`, base},
		"no server section":   {``, base},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			bin, site := filepath.Join(dir, "bin"), filepath.Join(dir, "site")
			info := filepath.Join(site, "llama_stack-0.7.1.dist-info")
			require.NoError(t, os.MkdirAll(bin, 0o755))
			require.NoError(t, os.MkdirAll(info, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(info, "METADATA"), []byte("Metadata-Version: 2.1\nName: llama_stack\nVersion: 0.7.1\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(site, "yaml.py"), []byte("import json\ndef safe_load(f):\n    return json.load(f)\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(bin, "uvicorn"), []byte("#!"+sh+"\necho \"uvicorn $*\"\n"), 0o755))
			cfg := filepath.Join(dir, "config.yaml")
			body := `{"version": 2}`
			if tc.server != "" {
				body = `{"version": 2, "server": ` + tc.server + `}`
			}
			require.NoError(t, os.WriteFile(cfg, []byte(body), 0o644))
			cmd := exec.Command(c.Command[0], c.Command[1], c.Command[2])
			cmd.Env = []string{"PATH=" + bin + ":" + filepath.Dir(python) + ":/usr/bin:/bin", "PYTHONPATH=" + site, "PYTHONNOUSERSITE=1", "LLAMA_STACK_CONFIG=" + cfg}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Equal(t, tc.want, strings.TrimSpace(string(out)))
		})
	}
}

// startScriptTools are the shell and the python3 the start script runs with
// (the images have both); the test is skipped on a machine without them.
func startScriptTools(t *testing.T) (sh, python string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("no python3")
	}
	return sh, strings.TrimSpace(string(out))
}
