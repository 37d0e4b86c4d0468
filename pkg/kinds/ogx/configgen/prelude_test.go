package configgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func postgresSpec(secret, key string) *v1beta1.OGXServerSpec {
	return &v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{SQL: &v1beta1.SQLStorageSpec{
		Type: "postgres", ConnectionString: &v1beta1.SecretKeyRef{Name: secret, Key: key},
	}}}
}

// TestPostgresStorage checks the config, Env and Prelude of a postgres
// sql_default, and that sqlite gives no Prelude.
func TestPostgresStorage(t *testing.T) {
	out, err := Generate(Input{Spec: postgresSpec("pg-secret-zq", "dsn-key-zq"), Base: []byte(minimalBase), DistroName: "d"})
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(out.Config, &cfg))
	assert.Equal(t, map[string]any{
		"type":     "sql_postgres",
		"host":     "${env.OGX_STORAGE_SQL_HOST}",
		"port":     "${env.OGX_STORAGE_SQL_PORT}",
		"db":       "${env.OGX_STORAGE_SQL_DB}",
		"user":     "${env.OGX_STORAGE_SQL_USER}",
		"password": "${env.OGX_STORAGE_SQL_PASSWORD}",
	}, cfg["storage"].(map[string]any)["backends"].(map[string]any)["sql_default"])
	assert.Equal(t, []corev1.EnvVar{{Name: "OGX_STORAGE_SQL_CONNECTION_STRING", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pg-secret-zq"}, Key: "dsn-key-zq"}}}}, out.Env)
	assert.Equal(t, postgresPrelude, out.Prelude)
	assert.NotContains(t, out.Prelude, "pg-secret-zq")
	assert.NotContains(t, out.Prelude, "dsn-key-zq")

	for _, spec := range []*v1beta1.OGXServerSpec{
		{Storage: &v1beta1.StateStorageSpec{}},
		{Storage: &v1beta1.StateStorageSpec{SQL: &v1beta1.SQLStorageSpec{Type: "sqlite"}}},
		{DisabledAPIs: []string{"files"}},
	} {
		out, err := Generate(Input{Spec: spec, Base: []byte(minimalBase), DistroName: "d"})
		require.NoError(t, err)
		assert.Empty(t, out.Prelude)
	}
}

func TestPostgresStorageFailures(t *testing.T) {
	reserved := postgresSpec("pg", "dsn")
	reserved.Providers = &v1beta1.ProvidersSpec{Inference: &v1beta1.InferenceProvidersSpec{Remote: &v1beta1.InferenceRemoteProviders{Custom: []v1beta1.CustomProvider{{
		RoutedProviderBase: v1beta1.RoutedProviderBase{ID: "storage-sql"}, Type: "remote::x",
		SecretRefs: map[string]v1beta1.SecretKeyRef{"password": {Name: "s", Key: "k"}},
	}}}}}
	for name, c := range map[string]struct {
		spec  *v1beta1.OGXServerSpec
		field string
	}{
		"no connection string":        {&v1beta1.OGXServerSpec{Storage: &v1beta1.StateStorageSpec{SQL: &v1beta1.SQLStorageSpec{Type: "postgres"}}}, "spec.storage.sql.connectionString"},
		"variable set by the prelude": {reserved, "spec.providers.inference.remote.custom[0].secretRefs.password"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Generate(Input{Spec: c.spec, Base: []byte(minimalBase), DistroName: "d"})
			var f *status.Failure
			require.True(t, errors.As(err, &f), "want a *status.Failure, got %v", err)
			assert.Equal(t, c.field, f.Field)
			assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
		})
	}
	// The same provider variable is fine without the prelude.
	reserved.Storage = nil
	_, err := Generate(Input{Spec: reserved, Base: []byte(minimalBase), DistroName: "d"})
	require.NoError(t, err)
}

// TestPreludeText checks what the prelude's embedding needs: the python
// program is in single quotes, so it holds none; nothing Kubernetes would
// expand in a container's command or args ($(NAME), $$); no trailing
// newline or separator, so "; cmd" or "\ncmd" can follow.
func TestPreludeText(t *testing.T) {
	assert.NotContains(t, postgresPreludePython, "'")
	assert.NotContains(t, postgresPrelude, "$$")
	assert.NotRegexp(t, regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`), postgresPrelude)
	assert.Equal(t, strings.TrimRight(postgresPrelude, " \n;&"), postgresPrelude)
	for _, name := range postgresPreludeVars {
		assert.Contains(t, postgresPreludePython, `"`+name+`"`)
	}
}

// TestPreludeRuns runs the prelude with /bin/sh and python3, as
// sh -c "$PRELUDE; env", and checks the exported variables; then reads
// them as the OGX server would (${env.NAME} substitution with its type
// conversion, then SQLAlchemy's URL parsing of the server's engine_str)
// and checks that the server gets the URL's user, password, host, port
// and database.
func TestPreludeRuns(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh on this machine: the prelude is not run")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this machine: the prelude is not run")
	}
	type server struct {
		User, Password, Host, Database string
		Port                           int
	}
	cases := []struct {
		name, url string
		env       map[string]string
		server    server
		note      bool
	}{
		{
			name: "full URL with encoded password",
			url:  "postgresql://app%40user:p%40ss%3Aw%2Fo%25rd%23%27%20x@db.example.com:6543/ogx?sslmode=require",
			env: map[string]string{envSQLHost: "db.example.com", envSQLPort: "6543", envSQLDB: "ogx",
				envSQLUser: "app%40user", envSQLPassword: "p%40ss%3Aw%2Fo%25rd%23%27%20x"},
			server: server{User: "app@user", Password: "p@ss:w/o%rd#' x", Host: "db.example.com", Port: 6543, Database: "ogx"},
			note:   true,
		},
		{
			name: "without port",
			url:  "postgres://ogx:s3cret@pg.ogx.svc/ogx-db",
			env: map[string]string{envSQLHost: "pg.ogx.svc", envSQLPort: "5432", envSQLDB: "ogx-db",
				envSQLUser: "ogx", envSQLPassword: "s3cret"},
			server: server{User: "ogx", Password: "s3cret", Host: "pg.ogx.svc", Port: 5432, Database: "ogx-db"},
		},
		{
			name: "values the server would retype, IPv6, decoded database",
			url:  "PostgreSQL://1234:true@[fd00::1]:5433/caf%C3%A9%20db",
			env: map[string]string{envSQLHost: "[fd00::1]", envSQLPort: "5433", envSQLDB: "café db",
				envSQLUser: "%31234", envSQLPassword: "%74rue"},
			server: server{User: "1234", Password: "true", Host: "fd00::1", Port: 5433, Database: "café db"},
		},
		{
			name: "password with ~ and a number",
			url:  "postgresql://u:~1e5@h/d",
			env: map[string]string{envSQLHost: "h", envSQLPort: "5432", envSQLDB: "d",
				envSQLUser: "u", envSQLPassword: "%7E1e5"},
			server: server{User: "u", Password: "~1e5", Host: "h", Port: 5432, Database: "d"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runPrelude(t, c.url)
			require.NoError(t, err, "stderr: %s", stderr)
			got := map[string]string{}
			for _, line := range strings.Split(stdout, "\n") {
				if name, value, ok := strings.Cut(line, "="); ok && slices.Contains(postgresPreludeVars, name) {
					got[name] = value
				}
			}
			assert.Equal(t, c.env, got)
			if c.note {
				assert.Contains(t, stderr, "ogx: note: the query parameters")
			} else {
				assert.Empty(t, stderr)
			}
			assert.Equal(t, c.server, readAsServer(t, got, &server{}))
		})
	}

	const secret = "topsecretpw"
	for name, url := range map[string]string{
		"not postgres":    "mysql://u:" + secret + "@h:3306/db",
		"no scheme":       "u:" + secret + "@h:5432/db",
		"no host":         "postgresql://u:" + secret + "@/db",
		"no database":     "postgresql://u:" + secret + "@h:5432",
		"empty database":  "postgresql://u:" + secret + "@h:5432/",
		"bad port":        "postgresql://u:" + secret + "@h:99999/db",
		"port not number": "postgresql://u:" + secret + "@h:abc/db",
		"no user":         "postgresql://:" + secret + "@h/db",
		"no password":     "postgresql://u@h/db?password=" + secret,
		"raw # in secret": "postgresql://u:" + secret + "#x@h/db",
		"several hosts":   "postgresql://u:" + secret + "@h1:5432,h2:5432/db",
		"unix socket":     "postgresql://u:" + secret + "@%2Fvar%2Frun/db",
		"numeric db":      "postgresql://u:" + secret + "@h/123",
		"bad IPv6":        "postgresql://u:" + secret + "@[zz::1/db",
		"empty":           "",
		"blank":           "   ",
	} {
		t.Run("bad URL "+name, func(t *testing.T) {
			stdout, stderr, err := runPrelude(t, url)
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "want a non-zero exit, got %v; stdout %q", err, stdout)
			assert.Equal(t, 1, exit.ExitCode())
			assert.Empty(t, stdout, "env must not run")
			assert.True(t, strings.HasPrefix(stderr, "ogx: spec.storage.sql.connectionString: "), "stderr: %q", stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr: %q", stderr)
			assert.NotContains(t, stderr, secret)
			assert.NotContains(t, stderr, "Traceback")
		})
	}
}

// runPrelude runs sh -c "$PRELUDE; env" with only PATH and the connection
// string (when not empty) in the environment.
func runPrelude(t *testing.T, url string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", postgresPrelude+"; env")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if url != "" {
		cmd.Env = append(cmd.Env, envSQLConnectionString+"="+url)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// serverReader reads the exported variables as the OGX server (ogx-ai/ogx
// 5a9cb55) does: stack.replace_env_vars on "${env.NAME}" (expanduser,
// then _convert_string_to_proper_type; the sql_postgres fields must stay
// strings, but port), PostgresSqlStoreConfig.engine_str, and SQLAlchemy
// 2.0's _parse_url (user and password unquoted, database not).
const serverReader = `
import json, os, re, sys
from urllib.parse import unquote
def convert(v):
    if v == "":
        return None
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    for f in (int, float):
        try:
            return f(v)
        except ValueError:
            pass
    return v
f = {}
for k in ("HOST", "PORT", "DB", "USER", "PASSWORD"):
    f[k] = convert(os.path.expanduser(os.environ["OGX_STORAGE_SQL_" + k]))
    if k != "PORT" and not isinstance(f[k], str):
        sys.exit("the server would read %s as %r" % (k, f[k]))
url = "postgresql+asyncpg://%s:%s@%s:%s/%s" % (f["USER"], f["PASSWORD"], f["HOST"], f["PORT"], f["DB"])
m = re.compile(r"""
    (?P<name>[\w\+]+)://
    (?:
        (?P<username>[^:/]*)
        (?::(?P<password>[^@]*))?
    @)?
    (?:
        (?:
            \[(?P<ipv6host>[^/\?]+)\] |
            (?P<ipv4host>[^/:\?]+)
        )?
        (?::(?P<port>[^/\?]*))?
    )?
    (?:/(?P<database>[^\?]*))?
    (?:\?(?P<query>.*))?
    """, re.X).match(url)
print(json.dumps({"User": unquote(m["username"]), "Password": unquote(m["password"]),
    "Host": m["ipv4host"] or m["ipv6host"], "Port": int(m["port"]), "Database": m["database"]}))
`

func readAsServer[T any](t *testing.T, env map[string]string, into *T) T {
	t.Helper()
	cmd := exec.Command("python3", "-c", serverReader)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.NoError(t, json.Unmarshal(out, into))
	return *into
}
