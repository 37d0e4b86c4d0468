package configgen

// Variables of spec.storage.sql.connectionString: the Secret's URL (in
// Output.Env) and what Output.Prelude sets from it (read by the config's
// sql_default backend).
const (
	envSQLConnectionString = envPrefix + "_STORAGE_SQL_CONNECTION_STRING"
	envSQLHost             = envPrefix + "_STORAGE_SQL_HOST"
	envSQLPort             = envPrefix + "_STORAGE_SQL_PORT"
	envSQLDB               = envPrefix + "_STORAGE_SQL_DB"
	envSQLUser             = envPrefix + "_STORAGE_SQL_USER"
	envSQLPassword         = envPrefix + "_STORAGE_SQL_PASSWORD"
)

// postgresPreludeVars are the variables postgresPrelude exports, in the
// order it exports them.
var postgresPreludeVars = []string{envSQLHost, envSQLPort, envSQLDB, envSQLUser, envSQLPassword}

// postgresPrelude is Output.Prelude for a postgres sql_default: it splits
// $OGX_STORAGE_SQL_CONNECTION_STRING into the fields of the server's
// sql_postgres backend with python3 (the OGX images have it), exports them,
// and exits 1 with a message on stderr when the URL cannot be used. It
// writes no part of the URL anywhere: python3's stdout is captured and only
// eval'd.
//
// The server builds postgresql+asyncpg://{user}:{password}@{host}:{port}/{db}
// and SQLAlchemy percent-decodes the user and password of that URL (not the
// database), so user and password are exported percent-encoded, host and
// db decoded (an IPv6 host in brackets). The server also reads a value made
// from ${env.NAME} that looks like a number or boolean as one, and expands
// a leading "~": the first character of such a user or password is
// percent-encoded too, and such a host or database name is refused.
var postgresPrelude = `command -v python3 >/dev/null 2>&1 || { echo "ogx: python3 is not in the image; it is needed to read spec.storage.sql.connectionString" >&2; exit 1; }
_ogx_sql=$(python3 -c '` + postgresPreludePython + `') || exit 1
eval "$_ogx_sql"
unset _ogx_sql`

// postgresPreludePython is the python3 program of postgresPrelude. It is in
// single quotes in the shell: it must hold none (chr(39) makes them).
const postgresPreludePython = `
import os, sys
from urllib import parse
FORM = "write it as postgresql://user:password@host:5432/database, with characters such as @ : / ? # % of the user and password percent-encoded"
def die(msg):
    sys.stderr.write("ogx: spec.storage.sql.connectionString: " + msg + "\n")
    sys.exit(1)
def typed(v):
    # Whether the OGX server reads v, substituted for ${env.NAME}, as other than this string.
    if v == "" or v.startswith("~") or v.lower() in ("true", "false"):
        return True
    for f in (int, float):
        try:
            f(v)
            return True
        except ValueError:
            pass
    return False
def enc(v):
    v = parse.quote(v, safe="")
    if typed(v):
        v = "%%%02X" % ord(v[0]) + v[1:]
    return v
def sq(v):
    return chr(39) + v.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39)) + chr(39)
s = os.environ.get("` + envSQLConnectionString + `", "").strip()
if not s:
    die("` + envSQLConnectionString + ` is not set or empty: check the Secret key")
try:
    u = parse.urlsplit(s)
    scheme, host, user, pw = u.scheme.lower(), u.hostname or "", u.username, u.password
except ValueError:
    die("the connection string is not a URL: " + FORM)
if scheme not in ("postgres", "postgresql"):
    die("the connection string is not a postgres:// or postgresql:// URL: " + FORM)
if u.fragment:
    die("the connection string has a # part: percent-encode # in the password as %23")
if "," in u.netloc.rpartition("@")[2]:
    die("the connection string names several hosts; the OGX server connects to one: keep one")
if not host:
    die("the connection string names no host: " + FORM)
if "%" in host or "/" in host:
    die("the host is not a host name or IP address (Unix sockets are not supported): " + FORM)
if ":" in host:
    host = "[" + host + "]"
if typed(host):
    die("the OGX server would read the host as a number or boolean: use a host name")
try:
    port = u.port
except ValueError:
    port = 0
if port is None:
    port = 5432
if not 1 <= port <= 65535:
    die("the port is not a number from 1 to 65535")
db = parse.unquote(u.path[1:])
if not db:
    die("the connection string names no database: " + FORM)
if "?" in db or "\0" in db:
    die("the database name holds ? or NUL, which the OGX server cannot pass: rename the database")
if typed(db):
    die("the OGX server would read the database name as a number or boolean, or expand its ~: rename the database")
if not user:
    die("the connection string names no user: " + FORM)
if not pw:
    die("the connection string has no password, which the OGX server needs: " + FORM)
if u.query:
    sys.stderr.write("ogx: note: the query parameters of spec.storage.sql.connectionString (sslmode, ...) are ignored: the postgres backend of the OGX server has no setting for them\n")
for name, v in (("` + envSQLHost + `", host), ("` + envSQLPort + `", str(port)), ("` + envSQLDB + `", db),
        ("` + envSQLUser + `", enc(parse.unquote(user))), ("` + envSQLPassword + `", enc(parse.unquote(pw)))):
    print("export " + name + "=" + sq(v))
`
