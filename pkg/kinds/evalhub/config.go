package evalhub

import (
	"fmt"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Fixed places of the server's files and ports (upstream's).
const (
	serverPort   = 8444
	configDir    = "/etc/evalhub/config"
	secretsDir   = "/etc/evalhub/secrets"
	mlflowCAPath = "/etc/evalhub/mlflow-ca/ca-bundle.crt"
	// sqliteURL is upstream's in-memory SQLite database: one replica's,
	// gone with the pod.
	sqliteURL = "file::eval_hub:?mode=memory&cache=shared"
)

// envMappings are the environment variables eval-hub reads into its
// configuration (upstream's env_mappings).
var envMappings = map[string]string{
	"API_HOST":                    "service.host",
	"DB_URL":                      "database.url",
	"DISABLE_AUTH":                "service.disable_auth",
	"MLFLOW_CA_CERT_PATH":         "mlflow.ca_cert_path",
	"MLFLOW_INSECURE_SKIP_VERIFY": "mlflow.insecure_skip_verify",
	"MLFLOW_TOKEN_PATH":           "mlflow.token_path",
	"MLFLOW_TRACKING_URI":         "mlflow.tracking_uri",
	"MLFLOW_WORKSPACE":            "mlflow.workspace",
	"PORT":                        "service.port",
	"TLS_CERT_FILE":               "service.tls_cert_file",
	"TLS_KEY_FILE":                "service.tls_key_file",
}

// checkDatabase is upstream's rule: the database must be chosen, and
// PostgreSQL needs the Secret of its URL.
func checkDatabase(db *evalhubv1.DatabaseSpec) error {
	switch {
	case db == nil || db.Type == "":
		return &status.Failure{Reason: "DatabaseConfigMissing", Field: "spec.database", Message: `is required: set spec.database.type to "sqlite" (in memory, one replica, lost with the pod) or "postgresql" with spec.database.secret; the operator does not choose a database for you`}
	case db.Type == evalhubv1.DatabasePostgreSQL && db.Secret == "":
		return &status.Failure{Reason: "DatabaseConfigInvalid", Field: "spec.database.secret", Message: `is required when spec.database.type is "postgresql": name a Secret of this namespace whose key db-url is the connection URL`}
	case db.Type != evalhubv1.DatabaseSQLite && db.Type != evalhubv1.DatabasePostgreSQL:
		return status.Invalid("spec.database.type", `%s is not a database type: use "sqlite" or "postgresql"`, status.Quote(db.Type))
	}
	return nil
}

// serverConfig is eval-hub's config.yaml for the CR: upstream's content
// (keys sorted, as upstream's marshalling sorts them).
func serverConfig(spec evalhubv1.EvalHubSpec, image string) (string, error) {
	if err := checkDatabase(spec.Database); err != nil {
		return "", err
	}
	cfg := map[string]any{
		"env_mappings": envMappings,
		"prometheus":   map[string]any{"enabled": true},
		"service": map[string]any{
			"port":             serverPort,
			"disable_auth":     true,
			"termination_file": "/tmp/termination-log",
			"eval_init_image":  image,
		},
		"sidecar": map[string]any{
			"base_url": "http://localhost:8080",
			"eval_hub": map[string]any{"http_timeout": int64(30 * time.Second)},
			"sidecar_container": map[string]any{
				"image": image,
				"resources": map[string]any{
					"requests": map[string]string{"cpu": "200m", "memory": "512Mi"},
					"limits":   map[string]string{"cpu": "500m", "memory": "2Gi"},
				},
			},
		},
	}
	db := spec.Database
	if db.Type == evalhubv1.DatabaseSQLite {
		cfg["database"] = map[string]any{"driver": "sqlite", "url": sqliteURL}
	} else {
		open, idle := db.MaxOpenConns, db.MaxIdleConns
		if open <= 0 {
			open = 25
		}
		if idle <= 0 {
			idle = 5
		}
		cfg["database"] = map[string]any{"driver": "pgx", "max_open_conns": open, "max_idle_conns": idle}
		cfg["secrets"] = map[string]any{"dir": secretsDir, "mappings": map[string]string{"db-url": "database.url"}}
	}
	if o := spec.Otel; o != nil {
		otel, err := otelConfig(o)
		if err != nil {
			return "", err
		}
		cfg["otel"] = otel
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("marshal eval-hub's config.yaml: %w", err)
	}
	return string(b), nil
}

// otelConfig is config.yaml's otel section: the presence of spec.otel turns
// it on; each field is upstream's key, written only when set.
func otelConfig(o *evalhubv1.OTELSpec) (map[string]any, error) {
	if o.EnableJobContainerLogs && !o.EnableLogs {
		return nil, status.Invalid("spec.otel.enableJobContainerLogs", "needs spec.otel.enableLogs: true (the jobs' container logs are exported as logs)")
	}
	out := map[string]any{"enabled": true}
	str := map[string]string{"exporter_type": o.ExporterType, "exporter_endpoint": o.ExporterEndpoint, "service_name": o.ServiceName}
	for k, v := range str {
		if v != "" {
			out[k] = v
		}
	}
	flags := map[string]bool{
		"exporter_insecure": o.ExporterInsecure, "enable_tracing": o.EnableTracing, "enable_metrics": o.EnableMetrics,
		"enable_logs": o.EnableLogs, "enable_job_container_logs": o.EnableJobContainerLogs,
		"enable_ecs_resource_detection": o.EnableEcsResourceDetection, "disable_redirect_otel_logs": o.DisableRedirectOtelLogs,
		"disable_database_otel_scan": o.DisableDatabaseOtelScans,
	}
	for k, v := range flags {
		if v {
			out[k] = true
		}
	}
	if o.SamplingRatio != "" {
		r, err := strconv.ParseFloat(o.SamplingRatio, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, status.Invalid("spec.otel.samplingRatio", "%s is not a ratio: write a number from 0 to 1, e.g. \"0.5\"", status.Quote(o.SamplingRatio))
		}
		out["sampling_ratio"] = r
	}
	for key, d := range map[string]struct{ field, value string }{
		"tracer_timeout":         {"tracerTimeout", o.TracerTimeout},
		"tracer_batch_interval":  {"tracerBatchInterval", o.TracerBatchInterval},
		"metric_export_interval": {"metricExportInterval", o.MetricExportInterval},
	} {
		if d.value == "" {
			continue
		}
		if _, err := time.ParseDuration(d.value); err != nil {
			return nil, status.Invalid("spec.otel."+d.field, "%s is not a duration: write one such as \"30s\" or \"1m30s\"", status.Quote(d.value))
		}
		out[key] = d.value
	}
	return out, nil
}
