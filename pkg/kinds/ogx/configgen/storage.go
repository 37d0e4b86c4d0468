package configgen

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Paths of the SQLite backends, under the default mount path unless
// SQLITE_STORE_DIR says otherwise.
const (
	sqliteKVPath  = "${env.SQLITE_STORE_DIR:=/.ogx}/kvstore.db"
	sqliteSQLPath = "${env.SQLITE_STORE_DIR:=/.ogx}/sqlstore.db"
)

// defaultRedisPort is the port of a Redis endpoint that names none.
const defaultRedisPort = 6379

// storage builds the storage section from spec.storage: the base's section
// with backends kv_default and sql_default replaced and the core stores
// pointed at them; the base's other backends and stores are kept.
func (g *generator) storage(base map[string]any) (map[string]any, error) {
	s := g.spec.Storage
	out := map[string]any{}
	backends := map[string]any{}
	stores := map[string]any{}
	if v, ok := base["storage"]; ok && v != nil {
		m, ok := asMap(v)
		if !ok {
			return nil, baseInvalid("storage is a %s, not a map", kindOf(v))
		}
		for k, v := range m {
			out[k] = v
		}
		for _, sec := range []struct {
			key string
			dst map[string]any
		}{{"backends", backends}, {"stores", stores}} {
			key, dst := sec.key, sec.dst
			v, ok := m[key]
			if !ok || v == nil {
				continue
			}
			sub, ok := asMap(v)
			if !ok {
				return nil, baseInvalid("storage.%s is a %s, not a map", key, kindOf(v))
			}
			for k, v := range sub {
				dst[k] = v
			}
		}
	}
	kv, err := g.kvStorage(s.KV)
	if err != nil {
		return nil, err
	}
	sql, err := g.sqlStorage(s.SQL)
	if err != nil {
		return nil, err
	}
	backends[kvBackend] = kv
	backends[sqlBackend] = sql
	// The stores the server's ServerStoresConfig defaults to; connectors is
	// required by the connectors API (storage.stores.connectors).
	stores["metadata"] = storeRef(kvBackend, "namespace", "registry")
	stores["inference"] = storeRef(sqlBackend, "table_name", "inference_store")
	stores["conversations"] = storeRef(sqlBackend, "table_name", "openai_conversations")
	stores["prompts"] = storeRef(kvBackend, "namespace", "prompts")
	stores["connectors"] = storeRef(kvBackend, "namespace", "connectors")
	out["backends"] = backends
	out["stores"] = stores
	return out, nil
}

func (g *generator) kvStorage(kv *v1beta1.KVStorageSpec) (map[string]any, error) {
	typ := "sqlite"
	if kv != nil && kv.Type != "" {
		typ = kv.Type
	}
	switch typ {
	case "sqlite":
		if kv != nil && kv.Endpoint != "" {
			return nil, status.Invalid("spec.storage.kv.endpoint", "endpoint applies only to type redis: remove it or set type: redis")
		}
		if kv != nil && kv.Password != nil {
			return nil, status.Invalid("spec.storage.kv.password", "password applies only to type redis: remove it or set type: redis")
		}
		return map[string]any{"type": "kv_sqlite", "db_path": sqliteKVPath}, nil
	case "redis":
		host, port, err := redisEndpoint(kv.Endpoint)
		if err != nil {
			return nil, err
		}
		if kv.Password != nil {
			// The server's Redis backend has no password setting: it
			// connects to redis://<host>:<port>, so the password goes in
			// the URL's user information.
			host = ":" + g.secretEnv(envKVPassword, *kv.Password, "spec.storage.kv.password") + "@" + host
		}
		return map[string]any{"type": "kv_redis", "host": host, "port": port}, nil
	}
	return nil, status.Invalid("spec.storage.kv.type", "type %q is not a key-value backend: use sqlite or redis", typ)
}

// sqlStorage is the sql_default backend of spec.storage.sql. Postgres reads
// the connection string's parts from the variables postgresPrelude sets
// (the server's sql_postgres backend takes host, port, db, user and
// password, not a connection string).
func (g *generator) sqlStorage(sql *v1beta1.SQLStorageSpec) (map[string]any, error) {
	typ := "sqlite"
	if sql != nil && sql.Type != "" {
		typ = sql.Type
	}
	switch typ {
	case "sqlite":
		if sql != nil && sql.ConnectionString != nil {
			return nil, status.Invalid("spec.storage.sql.connectionString", "connectionString applies only to type postgres: remove it or set type: postgres")
		}
		return map[string]any{"type": "sql_sqlite", "db_path": sqliteSQLPath}, nil
	case "postgres":
		if sql.ConnectionString == nil {
			return nil, status.Invalid("spec.storage.sql.connectionString",
				"type postgres needs the connection string: reference the Secret key holding it (postgresql://user:password@host:5432/database)")
		}
		g.secretEnv(envSQLConnectionString, *sql.ConnectionString, "spec.storage.sql.connectionString")
		g.prelude = postgresPrelude
		return map[string]any{
			"type":     "sql_postgres",
			"host":     envRefString(envSQLHost),
			"port":     envRefString(envSQLPort),
			"db":       envRefString(envSQLDB),
			"user":     envRefString(envSQLUser),
			"password": envRefString(envSQLPassword),
		}, nil
	}
	return nil, status.Invalid("spec.storage.sql.type", "type %q is not a SQL backend: use sqlite or postgres", typ)
}

// redisEndpoint splits a Redis endpoint, redis://host[:port] or
// host[:port], into the host and port the server's Redis backend takes.
func redisEndpoint(endpoint string) (string, int, error) {
	const field = "spec.storage.kv.endpoint"
	raw := strings.TrimSpace(endpoint)
	if raw == "" {
		return "", 0, status.Invalid(field, "type redis needs the Redis endpoint: set it (e.g. redis://redis:6379)")
	}
	if !strings.Contains(raw, "://") {
		raw = "redis://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0, status.Invalid(field, "endpoint %q is not a URL (%v): write it as redis://host:port", endpoint, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "redis":
	case "rediss":
		return "", 0, status.Invalid(field, "the OGX server connects to Redis without TLS only: use a redis:// endpoint")
	default:
		return "", 0, status.Invalid(field, "scheme %q is not redis: write the endpoint as redis://host:port", u.Scheme)
	}
	if u.User != nil {
		return "", 0, status.Invalid(field, "the endpoint holds credentials: remove them and put the password in spec.storage.kv.password")
	}
	if p := u.Path; p != "" && p != "/" && p != "/0" {
		return "", 0, status.Invalid(field, "the endpoint selects database %q, which the OGX server cannot (it uses database 0): remove the path", strings.TrimPrefix(p, "/"))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", 0, status.Invalid(field, "the endpoint has options the OGX server cannot pass: write it as redis://host:port")
	}
	host := u.Hostname()
	if host == "" {
		return "", 0, status.Invalid(field, "the endpoint has no host: write it as redis://host:port")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := defaultRedisPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, status.Invalid(field, "port %q is not a port number: use 1 to 65535", p)
		}
		port = n
	}
	return host, port, nil
}

// checkBaseBackends checks that the base's storage backends, which stay
// when spec.storage is unset, define the backends the spec's providers
// use. A base without storage.backends gets the server's defaults, which do.
func checkBaseBackends(base map[string]any, user providerSet) error {
	v, ok := base["storage"]
	if !ok || v == nil {
		return nil
	}
	storage, ok := asMap(v)
	if !ok {
		return baseInvalid("storage is a %s, not a map", kindOf(v))
	}
	b, ok := storage["backends"]
	if !ok || b == nil {
		return nil
	}
	backends, ok := asMap(b)
	if !ok {
		return baseInvalid("storage.backends is a %s, not a map", kindOf(b))
	}
	for _, api := range apiOrder {
		for _, p := range user[api] {
			for _, name := range p.backends {
				if _, ok := backends[name]; !ok {
					return status.Invalid("spec.baseConfig",
						"the base config's storage.backends has no %s, which the generated config of %s uses: add it to the base config or set spec.storage", name, p.path)
				}
			}
		}
	}
	return nil
}
