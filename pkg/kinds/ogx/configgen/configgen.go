package configgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Input is what Generate needs.
type Input struct {
	// Spec is the OGXServer's spec.
	Spec *v1beta1.OGXServerSpec
	// Base is the base config YAML: the key of spec.baseConfig's ConfigMap,
	// or the default config of the distribution image. Required.
	Base []byte
	// DistroName is spec.distribution.name, or the image reference when
	// spec.distribution.image is used. When empty, the base's distro_name
	// (else image_name) is kept.
	DistroName string
	// ServerTLS, when set, makes the server serve HTTPS with this pair
	// (server.tls_certfile and server.tls_keyfile).
	ServerTLS *ServerTLS
}

// ServerTLS is the paths, in the container, of the server's certificate
// and key.
type ServerTLS struct {
	CertFile, KeyFile string
}

// Output is the generated config and what the Deployment and the status
// need from it.
type Output struct {
	// Config is the config YAML (deterministic: same Input, same bytes).
	Config []byte
	// Env are the variables the config (or Prelude) reads Secrets through
	// (valueFrom.secretKeyRef), sorted by name, one per name.
	Env []corev1.EnvVar
	// Prelude is a POSIX sh command list, without a trailing newline or
	// separator, that the container must run before the server, in the
	// shell that then execs it (sh -c "<Prelude>\nexec <server>"); empty
	// when the config needs none. It is a constant: it holds no Secret
	// value, only reads the variables of Env.
	//
	// For spec.storage.sql type postgres it reads the URL in
	// $OGX_STORAGE_SQL_CONNECTION_STRING (postgres:// or postgresql://,
	// with user, password, host and database; port 5432 by default) and
	// exports OGX_STORAGE_SQL_HOST, _PORT, _DB, _USER and _PASSWORD, which
	// the config's sql_default reads: host and db decoded, user and
	// password percent-encoded as the server's SQLAlchemy URL reads them.
	// Query parameters (sslmode, ...) are ignored, with a note on stderr.
	// It needs python3. When the URL cannot be used (or python3 is
	// missing) it writes "ogx: ..." on stderr and exits 1, without writing
	// any part of the URL.
	Prelude string
	// Providers is the number of providers in the config, base ones
	// included (status.configGeneration.providerCount).
	Providers int
	// Resources is the number of models of spec.resources
	// (status.configGeneration.resourceCount).
	Resources int
	// ConfigVersion is the base's version as an integer; 2 when it is not
	// numeric.
	ConfigVersion int
}

// defaultConfigVersion is ConfigVersion when the base's version is not an
// integer.
const defaultConfigVersion = 2

// defaultServerPort is server.port when neither the spec nor the base sets
// it.
const defaultServerPort = 8321

// minServerPort is the lowest server.port the OGX server accepts
// (ServerConfig.port, ge=1024).
const minServerPort = 1024

// Active reports whether the spec asks for a generated config: no
// overrideConfig, and any of providers, resources, storage or a non-empty
// disabledAPIs. baseConfig alone does not.
func Active(spec *v1beta1.OGXServerSpec) bool {
	if spec == nil || spec.OverrideConfig != nil {
		return false
	}
	return spec.Providers != nil || spec.Resources != nil || spec.Storage != nil || len(spec.DisabledAPIs) > 0
}

// Generate builds the config from the base and the spec. Errors the user
// fixes in the CR are *status.Failure values naming the field.
func Generate(in Input) (Output, error) {
	spec := in.Spec
	if spec == nil {
		return Output{}, status.Invalid("spec", "the OGXServer has no spec: give one")
	}
	base, version, err := parseBase(in.Base)
	if err != nil {
		return Output{}, err
	}
	g := &generator{spec: spec}

	user, err := g.expandProviders()
	if err != nil {
		return Output{}, err
	}
	if err := checkDuplicateIDs(user); err != nil {
		return Output{}, err
	}
	providers, err := mergeProviders(base, user, spec.DisabledAPIs)
	if err != nil {
		return Output{}, err
	}
	models, err := g.models(providers["inference"])
	if err != nil {
		return Output{}, err
	}
	out := make(map[string]any, len(base)+4)
	for k, v := range base {
		out[k] = v
	}
	out["version"] = version
	delete(out, "image_name")
	distro := in.DistroName
	if distro == "" {
		distro = baseDistroName(base)
	}
	if distro == "" {
		return Output{}, status.Invalid("spec.distribution",
			"no distribution name: set spec.distribution.name or spec.distribution.image, or give the base config a distro_name")
	}
	out["distro_name"] = distro

	apis, err := mergeAPIs(base, user, spec.DisabledAPIs)
	if err != nil {
		return Output{}, err
	}
	if len(apis) > 0 {
		out["apis"] = apis
	} else {
		delete(out, "apis")
	}
	// Always written: providers is a required field of the server's
	// StackConfig, even when empty.
	out["providers"] = providers.yaml()

	rr, err := registeredResources(base, models)
	if err != nil {
		return Output{}, err
	}
	out["registered_resources"] = rr

	server, err := g.server(base, in.ServerTLS)
	if err != nil {
		return Output{}, err
	}
	out["server"] = server

	if spec.Storage != nil {
		storage, err := g.storage(base)
		if err != nil {
			return Output{}, err
		}
		out["storage"] = storage
	} else if err := checkBaseBackends(base, user); err != nil {
		return Output{}, err
	}

	env, err := g.envVars()
	if err != nil {
		return Output{}, err
	}
	config, err := marshal(out)
	if err != nil {
		return Output{}, err
	}
	configVersion, err := strconv.Atoi(version)
	if err != nil {
		configVersion = defaultConfigVersion
	}
	return Output{
		Config:        config,
		Env:           env,
		Prelude:       g.prelude,
		Providers:     providers.count(),
		Resources:     len(models),
		ConfigVersion: configVersion,
	}, nil
}

// maxNameLength is the longest ConfigMap name (a DNS subdomain).
const maxNameLength = 253

// ConfigMapName is the name of the ConfigMap holding config for the CR
// crName: "<crName>-config-<hash>", hash being the first 8 bytes of the
// SHA-256 of config as 16 hex characters. The CR name is cut (and trailing
// '-' and '.' removed) so that the name stays within 253 characters.
func ConfigMapName(crName string, config []byte) string {
	sum := sha256.Sum256(config)
	suffix := "-config-" + hex.EncodeToString(sum[:8])
	if room := maxNameLength - len(suffix); len(crName) > room {
		crName = strings.TrimRight(crName[:room], "-.")
	}
	return crName + suffix
}

// generator holds the spec and the Secret-backed variables collected while
// expanding it.
type generator struct {
	spec *v1beta1.OGXServerSpec
	env  []envRef
	// prelude is Output.Prelude.
	prelude string
}

// server is the base's server section with port set from spec.network.port
// (else the base's, else 8321), and the TLS pair when given.
func (g *generator) server(base map[string]any, tls *ServerTLS) (map[string]any, error) {
	server := map[string]any{}
	if v, ok := base["server"]; ok && v != nil {
		m, ok := asMap(v)
		if !ok {
			return nil, baseInvalid("server is a %s, not a map", kindOf(v))
		}
		for k, v := range m {
			server[k] = v
		}
	}
	if n := g.spec.Network; n != nil && n.Port != 0 {
		if n.Port < minServerPort || n.Port > 65535 {
			return nil, status.Invalid("spec.network.port",
				"port %d is refused by the OGX server, which listens only on ports %d to 65535: pick a port in that range", n.Port, minServerPort)
		}
		server["port"] = int(n.Port)
	} else if _, ok := server["port"]; !ok {
		server["port"] = defaultServerPort
	}
	if tls != nil {
		server["tls_certfile"] = tls.CertFile
		server["tls_keyfile"] = tls.KeyFile
	}
	return server, nil
}

// registeredResources is the base's registered_resources with models
// replaced by the spec's when it has any.
func registeredResources(base map[string]any, models []any) (map[string]any, error) {
	rr := map[string]any{}
	if v, ok := base["registered_resources"]; ok && v != nil {
		m, ok := asMap(v)
		if !ok {
			return nil, baseInvalid("registered_resources is a %s, not a map", kindOf(v))
		}
		for k, v := range m {
			rr[k] = v
		}
	}
	if len(models) > 0 {
		rr["models"] = models
	}
	return rr, nil
}

// mergeAPIs is the base's apis without the disabled ones, plus the API of
// every user provider when the base lists its APIs (an absent or empty list
// makes the server serve every API that has providers, and stays so).
func mergeAPIs(base map[string]any, user providerSet, disabled []string) ([]string, error) {
	v, ok := base["apis"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, baseInvalid("apis is a %s, not a list", kindOf(v))
	}
	var apis []string
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, baseInvalid("apis[%d] is a %s, not a string", i, kindOf(item))
		}
		if !slices.Contains(disabled, s) && !slices.Contains(apis, s) {
			apis = append(apis, s)
		}
	}
	if len(apis) == 0 {
		return nil, nil
	}
	for _, api := range apiOrder {
		if len(user[api]) > 0 && !slices.Contains(apis, api) {
			apis = append(apis, api)
		}
	}
	return apis, nil
}

// baseDistroName is the base's distro_name, else its image_name.
func baseDistroName(base map[string]any) string {
	for _, key := range []string{"distro_name", "image_name"} {
		if s, ok := base[key].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// baseInvalid is a failure of the base config.
func baseInvalid(format string, args ...any) *status.Failure {
	return status.Invalid("spec.baseConfig", "the base config is invalid: "+format+"; fix the base config", args...)
}

// kindOf names a decoded YAML value's kind for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int64, uint64, float64:
		return "number"
	case []any:
		return "list"
	case map[string]any, map[any]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
