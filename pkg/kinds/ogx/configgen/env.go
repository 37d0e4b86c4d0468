package configgen

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// envPrefix starts the name of every variable the generated config reads
// a Secret through.
const envPrefix = "OGX"

// envKVPassword is the variable of spec.storage.kv.password.
const envKVPassword = envPrefix + "_STORAGE_KV_PASSWORD"

// envNamePattern is what a generated variable name must match.
var envNamePattern = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// envRef is a variable fed by a Secret key, and the CR field it comes from.
type envRef struct {
	name string
	ref  v1beta1.SecretKeyRef
	path string
}

// norm turns s into a variable name part: upper case, each run of
// characters other than A-Z and 0-9 made one '_', '_' trimmed from both
// ends, '_' put before a leading digit, and "_" for nothing.
func norm(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	switch {
	case out == "":
		return "_"
	case out[0] >= '0' && out[0] <= '9':
		return "_" + out
	}
	return out
}

// envName is the variable of a provider's secret field:
// OGX_<norm(providerID)>_<field>.
func envName(providerID, field string) string {
	return envPrefix + "_" + norm(providerID) + "_" + field
}

// secret records the variable of a provider's Secret reference and returns
// the config's reference to it.
func (g *generator) secret(providerID, field string, ref v1beta1.SecretKeyRef, path string) string {
	return g.secretEnv(envName(providerID, field), ref, path)
}

// secretEnv records the variable name, fed by ref, and returns ${env.name}.
func (g *generator) secretEnv(name string, ref v1beta1.SecretKeyRef, path string) string {
	g.env = append(g.env, envRef{name: name, ref: ref, path: path})
	return envRefString(name)
}

// envRefString is the config's reference to variable name: ${env.name}.
func envRefString(name string) string {
	return "${env." + name + "}"
}

// envVars checks the recorded variables (valid names; one Secret key per
// name) and returns them sorted by name, each once.
func (g *generator) envVars() ([]corev1.EnvVar, error) {
	seen := make(map[string]envRef, len(g.env))
	for _, e := range g.env {
		if !envNamePattern.MatchString(e.name) {
			return nil, status.Invalid(e.path, "the environment variable name %q made for this Secret reference is not valid: change the provider ID or key", e.name)
		}
		if g.prelude != "" && slices.Contains(postgresPreludeVars, e.name) {
			return nil, status.Invalid(e.path,
				"the environment variable name %q made for this Secret reference is set from spec.storage.sql.connectionString: change the provider ID or key", e.name)
		}
		if first, ok := seen[e.name]; ok {
			if first.ref != e.ref {
				return nil, status.Invalid(e.path,
					"this Secret reference (%s/%s) and %s (%s/%s) both become environment variable %s: give the providers IDs (for custom secretRefs, keys) that differ in more than case and punctuation",
					e.ref.Name, e.ref.Key, first.path, first.ref.Name, first.ref.Key, e.name)
			}
			continue
		}
		seen[e.name] = e
	}
	if len(seen) == 0 {
		return nil, nil
	}
	env := make([]corev1.EnvVar, 0, len(seen))
	for name, e := range seen {
		env = append(env, corev1.EnvVar{
			Name: name,
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: e.ref.Name},
				Key:                  e.ref.Key,
			}},
		})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	return env, nil
}
