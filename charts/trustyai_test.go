package charts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

func renderTAS(t *testing.T, vals map[string]any, apis ...string) string {
	t.Helper()
	c, err := Load("trustyai-service")
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "tas", Namespace: "team-a", APIVersions: apis})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: "team-a", Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// tasDeployment returns the rendered Deployment.
func tasDeployment(t *testing.T, manifest string) *appsv1.Deployment {
	t.Helper()
	for _, doc := range guard.Documents(manifest) {
		if strings.Contains(doc, "\nkind: Deployment\n") {
			d := &appsv1.Deployment{}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), d))
			return d
		}
	}
	t.Fatal("no Deployment")
	return nil
}

func container(d *appsv1.Deployment, name string) corev1.Container {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

func envOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			v = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
		out[e.Name] = v
	}
	return out
}

// With its own defaults, as `helm template` renders it: upstream's objects
// and names, PVC mode, no TLS creator on a plain cluster.
func TestTrustyAIChartDefaultsRender(t *testing.T) {
	out := renderTAS(t, nil)
	for _, want := range []string{
		"kind: Deployment\nmetadata:\n  name: \"tas\"\n",
		"kind: Service\nmetadata:\n  name: \"tas\"\n",
		"kind: Service\nmetadata:\n  name: \"tas-tls\"\n",
		"kind: PersistentVolumeClaim\nmetadata:\n  name: \"tas-pvc\"\n",
		"kind: ServiceAccount\nmetadata:\n  name: \"tas-proxy\"\n",
		"kind: ConfigMap\nmetadata:\n  name: \"tas-kube-rbac-proxy-config\"\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "kind: Ingress", "no host: nothing exposed")
	exposed := renderTAS(t, map[string]any{"ingress": map[string]any{"host": "tas.team-a.apps.example.com"}})
	assert.Contains(t, exposed, "kind: Ingress\nmetadata:\n  name: \"tas\"\n")
	assert.Contains(t, exposed, "    - host: \"tas.team-a.apps.example.com\"\n")
	assert.NotContains(t, out, "kind: Route")
	assert.NotContains(t, out, "kind: ServiceMonitor")
	assert.NotContains(t, out, "cert-manager.io")
	d := tasDeployment(t, out)
	env := envOf(container(d, "trustyai-service"))
	assert.Equal(t, "PVC", env["SERVICE_STORAGE_FORMAT"])
	assert.Equal(t, "/inputs", env["STORAGE_DATA_FOLDER"])
	assert.Equal(t, "data.csv", env["STORAGE_DATA_FILENAME"])
	assert.Equal(t, "CSV", env["SERVICE_DATA_FORMAT"])
	assert.Equal(t, "false", env["QUARKUS_HIBERNATE_ORM_ACTIVE"])
	assert.Equal(t, "5s", env["SERVICE_METRICS_SCHEDULE"])
	assert.Equal(t, "5000", env["SERVICE_BATCH_SIZE"])
	proxy := container(d, "kube-rbac-proxy")
	assert.NotContains(t, strings.Join(proxy.Args, " "), "--tls-cert-file", "no Secret has a creator: the proxy's own certificate")
	for _, v := range d.Spec.Template.Spec.Volumes {
		assert.Nil(t, v.Secret, "volume %s: no Secret is mounted that nothing creates", v.Name)
	}
	assert.Equal(t, "Recreate", string(d.Spec.Strategy.Type))
	assert.Equal(t, "tas-proxy", d.Spec.Template.Spec.ServiceAccountName)
}

// Every Secret a pod mounts has a creator: OpenShift's service CA through the
// Services' annotations, or cert-manager's Certificates; without either, none
// is mounted.
func TestTrustyAIEverySecretMountedHasACreator(t *testing.T) {
	for _, tc := range []struct {
		name string
		apis []string
		mode string
	}{
		{"openshift", []string{"security.openshift.io/v1/SecurityContextConstraints", "route.openshift.io/v1/Route"}, "openshift"},
		{"cert-manager", []string{"cert-manager.io/v1/Certificate"}, "cert-manager"},
		{"plain", nil, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := renderTAS(t, map[string]any{"storage": map[string]any{"format": "DATABASE", "databaseCA": true}}, tc.apis...)
			created := map[string]bool{}
			for _, doc := range guard.Documents(out) {
				var o struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Annotations map[string]string `json:"annotations"`
					} `json:"metadata"`
					Spec struct {
						SecretName string `json:"secretName"`
					} `json:"spec"`
				}
				require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
				if s := o.Metadata.Annotations["service.beta.openshift.io/serving-cert-secret-name"]; s != "" && tc.mode == "openshift" {
					created[s] = true
				}
				if o.Kind == "Certificate" {
					created[o.Spec.SecretName] = true
				}
			}
			d := tasDeployment(t, out)
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret == nil {
					continue
				}
				// <name>-db-ca is the user's: it is mounted only once the operator saw it.
				if v.Secret.SecretName == "tas-db-ca" {
					continue
				}
				assert.True(t, created[v.Secret.SecretName], "Secret %s is mounted and nothing creates it", v.Secret.SecretName)
			}
			if tc.mode != "none" {
				assert.True(t, created["tas-tls"] && created["tas-internal"], "created: %v", created)
				assert.Contains(t, strings.Join(container(d, "kube-rbac-proxy").Args, " "), "--tls-cert-file=/etc/tls/private/tls.crt")
			} else {
				assert.Empty(t, created)
			}
		})
	}
}

// DATABASE mode: every connection setting comes from the Secret; the
// optional generation key may be missing; with <name>-db-ca, verified TLS.
func TestTrustyAIChartDatabase(t *testing.T) {
	out := renderTAS(t, map[string]any{"storage": map[string]any{"format": "DATABASE", "databaseSecret": "db-credentials", "databaseCA": true}})
	assert.NotContains(t, out, "PersistentVolumeClaim", "no claim in DATABASE mode without a migration")
	d := tasDeployment(t, out)
	svc := container(d, "trustyai-service")
	env := envOf(svc)
	for name, key := range map[string]string{"QUARKUS_DATASOURCE_DB_KIND": "databaseKind", "QUARKUS_DATASOURCE_USERNAME": "databaseUsername", "QUARKUS_DATASOURCE_PASSWORD": "databasePassword", "DATABASE_SERVICE": "databaseService", "DATABASE_PORT": "databasePort", "DATABASE_NAME": "databaseName", "QUARKUS_DATASOURCE_GENERATION": "databaseGeneration"} {
		assert.Equal(t, "secret:db-credentials/"+key, env[name], name)
	}
	for _, e := range svc.Env {
		if e.Name == "QUARKUS_DATASOURCE_GENERATION" {
			require.NotNil(t, e.ValueFrom.SecretKeyRef.Optional)
			assert.True(t, *e.ValueFrom.SecretKeyRef.Optional)
		}
	}
	assert.Equal(t, "jdbc:${QUARKUS_DATASOURCE_DB_KIND}://${DATABASE_SERVICE}:${DATABASE_PORT}/${DATABASE_NAME}?requireSSL=true&sslMode=verify-ca&serverSslCert=/etc/tls/db/ca.crt", env["QUARKUS_DATASOURCE_JDBC_URL"])
	assert.Equal(t, "HIBERNATE", env["SERVICE_DATA_FORMAT"])
	assert.Contains(t, svc.VolumeMounts, corev1.VolumeMount{Name: "db-ca", MountPath: "/etc/tls/db", ReadOnly: true})

	plain := envOf(container(tasDeployment(t, renderTAS(t, map[string]any{"storage": map[string]any{"format": "DATABASE"}})), "trustyai-service"))
	assert.Equal(t, "secret:tas-db-credentials/databaseKind", plain["QUARKUS_DATASOURCE_DB_KIND"], "upstream's default Secret name")
	assert.Equal(t, "jdbc:${QUARKUS_DATASOURCE_DB_KIND}://${DATABASE_SERVICE}:${DATABASE_PORT}/${DATABASE_NAME}", plain["QUARKUS_DATASOURCE_JDBC_URL"])

	migration := renderTAS(t, map[string]any{"storage": map[string]any{"format": "DATABASE", "migration": true}})
	assert.Contains(t, migration, "kind: PersistentVolumeClaim")
	menv := envOf(container(tasDeployment(t, migration), "trustyai-service"))
	assert.Equal(t, "true", menv["DATABASE_ATTEMPT_MIGRATION"])
	assert.Equal(t, "/inputs", menv["STORAGE_MIGRATION_CONFIG_FROM_FOLDER"])
	assert.Equal(t, "data.csv", menv["STORAGE_MIGRATION_CONFIG_FROM_FILENAME"])
}

// Both containers get the merged CA bundle the way each reads it: the proxy
// (Go) through SSL_CERT_FILE, the service (a JVM, which ignores it) through
// Quarkus' PEM trust store.
func TestTrustyAIEachContainerGetsTheBundle(t *testing.T) {
	d := tasDeployment(t, renderTAS(t, map[string]any{"trust": map[string]any{"configMapName": "tas-ca-bundle"}}))
	const file = "/etc/pki/ai-stack-operator/ca-bundle.crt"
	svc, proxy := container(d, "trustyai-service"), container(d, "kube-rbac-proxy")
	assert.Equal(t, file, envOf(svc)["QUARKUS_TLS_TRUST_STORE_PEM_CERTS"])
	assert.Equal(t, file, envOf(proxy)["SSL_CERT_FILE"])
	for _, c := range []corev1.Container{svc, proxy} {
		assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "ca-bundle", MountPath: "/etc/pki/ai-stack-operator/", ReadOnly: true}, c.Name)
	}
}

func TestTrustyAIChartDeclaresEveryKindItRenders(t *testing.T) {
	trust := map[string]any{"serviceCA": true, "clusterTrustedCA": true}
	declaresWhatItRenders(t, "trustyai-service",
		map[string]any{"trust": trust, "capabilities": map[string]any{"route": true, "serviceMonitor": true, "openshift": true, "certManager": false}},
		map[string]any{"trust": trust, "capabilities": map[string]any{"route": false, "serviceMonitor": false, "openshift": false, "certManager": true, "istio": true}, "ingress": map[string]any{"host": "all.ns.apps.example.com"}, "istio": map[string]any{"sidecarClients": true}},
	)
}

func TestTrustyAIChartSchemaRejectsBadValues(t *testing.T) {
	c, err := Load("trustyai-service")
	require.NoError(t, err)
	for name, vals := range map[string]map[string]any{
		"negative replicas": {"replicas": -1},
		"unknown format":    {"storage": map[string]any{"format": "S3"}},
		"zero batch":        {"metrics": map[string]any{"schedule": "5s", "batchSize": 0}},
		"inexact batch":     {"metrics": map[string]any{"schedule": "5s", "batchSize": float64(1<<53 + 2)}},
		"hex batch":         {"metrics": map[string]any{"schedule": "5s", "batchSize": "0x10"}},
		"host with scheme":  {"ingress": map[string]any{"host": "https://tas.example.com"}},
		"schedule 1h30m":    {"metrics": map[string]any{"schedule": "1h30m", "batchSize": 1}},
		"schedule 500ms":    {"metrics": map[string]any{"schedule": "500ms", "batchSize": 1}},
		"schedule 1.5m":     {"metrics": map[string]any{"schedule": "1.5m", "batchSize": 1}},
		"schedule P1M":      {"metrics": map[string]any{"schedule": "P1M", "batchSize": 1}},
		"schedule -PT5S":    {"metrics": map[string]any{"schedule": "-PT5S", "batchSize": 1}},
		"unknown value":     {"nope": true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(c.Chart, vals, render.Options{ReleaseName: "x", Namespace: "default"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "schema")
		})
	}
}

// The service parses SERVICE_METRICS_SCHEDULE as ISO-8601 (PT30S) or as a
// whole number and a unit (30s): the chart takes both, as it is given.
func TestTrustyAIChartScheduleForms(t *testing.T) {
	for _, s := range []string{"5s", "30s", "1d", "PT30S", "PT1H30M", "P1DT2H30M45S", "PT1.5S", "P2W"} {
		env := envOf(container(tasDeployment(t, renderTAS(t, map[string]any{"metrics": map[string]any{"schedule": s, "batchSize": 5000}})), "trustyai-service"))
		assert.Equal(t, s, env["SERVICE_METRICS_SCHEDULE"])
	}
}

// Where the pods mount the PVC (PVC mode, a migration) the chart runs one pod
// whatever replicas says: one pod mounts a ReadWriteOnce claim (upstream
// always runs 1). With the data in a database it runs replicas.
func TestTrustyAIChartOnePodWithAClaim(t *testing.T) {
	for _, tc := range []struct {
		name     string
		storage  map[string]any
		replicas int
		want     int32
	}{
		{"PVC", map[string]any{"format": "PVC", "folder": "/inputs", "size": "1Gi"}, 3, 1},
		{"PVC, 0", map[string]any{"format": "PVC", "folder": "/inputs", "size": "1Gi"}, 0, 1},
		{"migration", map[string]any{"format": "DATABASE", "folder": "/inputs", "size": "1Gi", "migration": true}, 3, 1},
		{"DATABASE", map[string]any{"format": "DATABASE"}, 3, 3},
		{"DATABASE, 0", map[string]any{"format": "DATABASE"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tasDeployment(t, renderTAS(t, map[string]any{"replicas": tc.replicas, "storage": tc.storage}))
			require.NotNil(t, d.Spec.Replicas)
			assert.Equal(t, tc.want, *d.Spec.Replicas)
		})
	}
}

// The ServiceMonitor scrapes /q/metrics where the service serves it: its TLS
// endpoint (the Service's https port, 443 -> 4443), verified against the CA
// of whoever issues <name>-internal, for the name <name>.<namespace>.svc.
// Port 8080 serves the health probes alone. Without a certificate there is
// nothing to scrape, and no ServiceMonitor.
func TestTrustyAIServiceMonitorScrapesTheTLSEndpoint(t *testing.T) {
	type endpoint struct {
		Port, Scheme, Path string
		TLSConfig          struct {
			ServerName string `json:"serverName"`
			CA         struct {
				ConfigMap *corev1.ConfigMapKeySelector `json:"configMap"`
				Secret    *corev1.SecretKeySelector    `json:"secret"`
			} `json:"ca"`
		} `json:"tlsConfig"`
	}
	monitorOf := func(out string) *endpoint {
		for _, doc := range guard.Documents(out) {
			if strings.Contains(doc, "\nkind: ServiceMonitor\n") {
				var sm struct {
					Spec struct{ Endpoints []endpoint } `json:"spec"`
				}
				require.NoError(t, yaml.Unmarshal([]byte(doc), &sm))
				require.Len(t, sm.Spec.Endpoints, 1)
				return &sm.Spec.Endpoints[0]
			}
		}
		return nil
	}
	servicePorts := func(out string) map[string]string {
		ports := map[string]string{}
		for _, doc := range guard.Documents(out) {
			if strings.Contains(doc, "\nkind: Service\n") {
				svc := &corev1.Service{}
				require.NoError(t, yaml.Unmarshal([]byte(doc), svc))
				if svc.Name != "tas" {
					continue
				}
				for _, p := range svc.Spec.Ports {
					ports[p.Name] = p.TargetPort.String()
				}
			}
		}
		return ports
	}
	const monitoring = "monitoring.coreos.com/v1/ServiceMonitor"

	openshift := renderTAS(t, nil, monitoring, "security.openshift.io/v1/SecurityContextConstraints")
	ep := monitorOf(openshift)
	require.NotNil(t, ep)
	assert.Equal(t, "https", ep.Port)
	assert.Equal(t, "4443", servicePorts(openshift)[ep.Port], "the port is the service's TLS endpoint")
	assert.Equal(t, "https", ep.Scheme)
	assert.Equal(t, "/q/metrics", ep.Path)
	assert.Equal(t, "tas.team-a.svc", ep.TLSConfig.ServerName, "the name the serving certificate is for")
	require.NotNil(t, ep.TLSConfig.CA.ConfigMap)
	assert.Equal(t, "openshift-service-ca.crt", ep.TLSConfig.CA.ConfigMap.Name)
	assert.Equal(t, "service-ca.crt", ep.TLSConfig.CA.ConfigMap.Key)

	certManager := renderTAS(t, nil, monitoring, "cert-manager.io/v1/Certificate")
	ep = monitorOf(certManager)
	require.NotNil(t, ep)
	assert.Equal(t, "https", ep.Scheme)
	assert.Equal(t, "4443", servicePorts(certManager)[ep.Port])
	require.NotNil(t, ep.TLSConfig.CA.Secret)
	assert.Equal(t, "tas-internal", ep.TLSConfig.CA.Secret.Name, "cert-manager writes the issuer's CA beside the certificate")
	assert.Equal(t, "ca.crt", ep.TLSConfig.CA.Secret.Key)
	assert.Contains(t, certManager, "\"tas.team-a.svc\"", "the Certificate covers the server name")

	plain := renderTAS(t, nil, monitoring)
	assert.Nil(t, monitorOf(plain), "no certificate: no endpoint serves the metrics to a scraper")
	assert.NotContains(t, servicePorts(plain), "https")
}

// istioDoc returns the rendered object of the kind, nil when there is none.
func istioDoc(t *testing.T, manifest, kind string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, doc := range guard.Documents(manifest) {
		o := map[string]any{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
		if o["kind"] == kind {
			require.Nil(t, found, "two objects of kind %s", kind)
			found = o
		}
	}
	return found
}

// Istio's routes for model servers with a sidecar: upstream's names, API
// version and fields, with the chart's labels; only with Istio's APIs (both),
// a sidecar client, and the https port they route to.
func TestTrustyAIChartIstioRoutes(t *testing.T) {
	const dr, vs = "networking.istio.io/v1beta1/DestinationRule", "networking.istio.io/v1beta1/VirtualService"
	clients := map[string]any{"istio": map[string]any{"sidecarClients": true}}
	out := renderTAS(t, clients, dr, vs, "cert-manager.io/v1/Certificate")

	host := "tas.team-a.svc.cluster.local"
	rule := istioDoc(t, out, "DestinationRule")
	require.NotNil(t, rule, "DestinationRule rendered")
	assert.Equal(t, "networking.istio.io/v1beta1", rule["apiVersion"])
	assert.Equal(t, map[string]any{
		"host": host,
		"trafficPolicy": map[string]any{"portLevelSettings": []any{
			map[string]any{"port": map[string]any{"number": float64(443)}, "tls": map[string]any{"mode": "SIMPLE"}},
		}},
	}, rule["spec"])
	virtual := istioDoc(t, out, "VirtualService")
	require.NotNil(t, virtual, "VirtualService rendered")
	assert.Equal(t, "networking.istio.io/v1beta1", virtual["apiVersion"])
	assert.Equal(t, map[string]any{
		"hosts": []any{host},
		"http": []any{map[string]any{
			"match": []any{map[string]any{"port": float64(80)}},
			"route": []any{map[string]any{"destination": map[string]any{"host": host, "port": map[string]any{"number": float64(443)}}}},
		}},
	}, virtual["spec"])
	for name, o := range map[string]map[string]any{"tas-internal": rule, "tas-redirect": virtual} {
		md := o["metadata"].(map[string]any)
		assert.Equal(t, name, md["name"])
		labels := md["labels"].(map[string]any)
		assert.Equal(t, "Helm", labels["app.kubernetes.io/managed-by"], name)
		assert.Equal(t, "tas", labels["app.kubernetes.io/instance"], name)
	}
	assert.Contains(t, out, "kind: Service\nmetadata:\n  name: \"tas\"\n")

	for name, c := range map[string]struct {
		vals map[string]any
		apis []string
	}{
		"no sidecar client":            {nil, []string{dr, vs, "cert-manager.io/v1/Certificate"}},
		"no Istio":                     {clients, []string{"cert-manager.io/v1/Certificate"}},
		"DestinationRule API only":     {clients, []string{dr, "cert-manager.io/v1/Certificate"}},
		"VirtualService API only":      {clients, []string{vs, "cert-manager.io/v1/Certificate"}},
		"no https port (no TLS)":       {clients, []string{dr, vs}},
		"Istio switched off by values": {map[string]any{"istio": map[string]any{"sidecarClients": true}, "capabilities": map[string]any{"istio": false}}, []string{dr, vs, "cert-manager.io/v1/Certificate"}},
	} {
		t.Run(name, func(t *testing.T) {
			out := renderTAS(t, c.vals, c.apis...)
			assert.NotContains(t, out, "networking.istio.io")
		})
	}
}
