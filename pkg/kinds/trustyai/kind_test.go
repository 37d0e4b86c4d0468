package trustyai

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// upstreamSample is upstream's v1 sample.
const upstreamSample = `
metadata: {name: trustyaiservice-sample, namespace: team-a}
spec:
  replicas: 1
  storage: {format: PVC, folder: /inputs, size: 1Gi}
  data: {filename: data.csv, format: CSV}
  metrics: {schedule: 5s, batchSize: 5000}
`

func sample(t *testing.T, mut func(*trustyv1.TrustyAIService)) *trustyv1.TrustyAIService {
	cr := &trustyv1.TrustyAIService{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(upstreamSample), cr))
	if mut != nil {
		mut(cr)
	}
	return cr
}

var defaults = Settings{ServiceImage: DefaultServiceImage, ProxyImage: trustyaifamily.DefaultProxyImage, Wiring: true}

func render1(t *testing.T, cr *trustyv1.TrustyAIService, caps release.Capabilities, trustCM string) string {
	t.Helper()
	c, err := charts.Load("trustyai-service")
	require.NoError(t, err)
	in := inputs(defaults, caps)
	in.values.TrustConfigMap, in.values.TrustHash = trustCM, "h"
	in.values.SidecarClients = meshRoutes(in.values.Platform)
	vals, err := (&Kind{}).Values(cr, in)
	require.NoError(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: naming.ReleaseName(ReleasePrefix, cr.Namespace, cr.Name), Namespace: cr.Namespace, APIVersions: caps.APIVersions()})
	require.NoError(t, err)
	_, err = guard.Check(out, guard.Policy{Namespace: cr.Namespace, Kinds: c.Kinds})
	require.NoError(t, err)
	return out
}

// names.go and the chart give every object the same name, for every object
// on every platform, at the edges of what the CRD lets a name be.
func TestNamesMatchTheChart(t *testing.T) {
	for _, name := range []string{"trustyai-service", "a", strings.Repeat("t", 59), "x-" + strings.Repeat("1", 57)} {
		for _, caps := range []release.Capabilities{
			release.NewCapabilities(platform.SCC, platform.Route, platform.ServiceMonitor),
			release.NewCapabilities(platform.Certificate),
			release.NewCapabilities(platform.Certificate, platform.InferenceService, platform.DestinationRule, platform.VirtualService),
		} {
			t.Run(fmt.Sprintf("%.12s-%d", name, len(caps.APIVersions())), func(t *testing.T) {
				cr := sample(t, func(cr *trustyv1.TrustyAIService) { cr.Name = name })
				want := chartNames(name)
				got := map[string]string{}
				for _, doc := range guard.Documents(render1(t, cr, caps, bundleName(name))) {
					var o struct {
						Kind     string `json:"kind"`
						Metadata struct {
							Name        string            `json:"name"`
							Labels      map[string]string `json:"labels"`
							Annotations map[string]string `json:"annotations"`
						} `json:"metadata"`
					}
					require.NoError(t, yaml.Unmarshal([]byte(doc), &o))
					key := o.Kind
					switch {
					case o.Kind == "Service" && strings.HasSuffix(o.Metadata.Name, "-tls"):
						key = "Service/tls"
					case o.Kind == "Service":
						key = "Service/internal"
					case o.Kind == "Certificate":
						key = "Certificate/" + o.Metadata.Name
					case o.Kind != "ConfigMap":
					case o.Metadata.Labels["app.kubernetes.io/component"] == "kube-rbac-proxy":
						key = "ConfigMap/kube-rbac-proxy"
					case o.Metadata.Annotations["service.beta.openshift.io/inject-cabundle"] == "true":
						key = "ConfigMap/service-ca"
					case o.Metadata.Labels["config.openshift.io/inject-trusted-cabundle"] == "true":
						key = "ConfigMap/trusted-ca"
					}
					require.NotContains(t, got, key, "two objects of %s", key)
					got[key] = o.Metadata.Name
					require.Contains(t, want, key, "names.go has no name for %s", key)
					assert.Equal(t, want[key], o.Metadata.Name, key)
				}
				assert.Contains(t, got, "Deployment")
				assert.Contains(t, got, "Service/tls")
				assert.Contains(t, got, "PersistentVolumeClaim")
				if caps.Has(platform.DestinationRule) {
					assert.Contains(t, got, "DestinationRule")
					assert.Contains(t, got, "VirtualService")
				} else {
					assert.NotContains(t, got, "DestinationRule")
				}
				if caps.Has(platform.SCC) {
					assert.Contains(t, got, "Route")
					assert.Contains(t, got, "ConfigMap/service-ca")
				} else {
					assert.Contains(t, got, "Certificate/"+tlsSecretName(name))
					assert.Contains(t, got, "Issuer")
				}
			})
		}
	}
	assert.LessOrEqual(t, len(proxyBindingName(strings.Repeat("t", 59), strings.Repeat("n", 63))), 253)
	assert.NotEqual(t, proxyBindingName("a-b", "c"), proxyBindingName("a", "b-c"), "upstream's name collides across namespaces; ours does not")
}

func TestTranslate(t *testing.T) {
	in := inputs(defaults, release.NewCapabilities()).values
	v, err := translate(sample(t, nil), in)
	require.NoError(t, err)
	assert.Equal(t, "trustyaiservice-sample", v.Name)
	assert.Equal(t, int32(1), v.Replicas)
	assert.Equal(t, storageValues{Format: "PVC", Folder: "/inputs", Size: "1Gi", DatabaseSecret: "trustyaiservice-sample-db-credentials"}, v.Storage)
	assert.Equal(t, metricsValues{Schedule: "5s", BatchSize: 5000}, v.Metrics)
	assert.Equal(t, platform.TLSNone, v.TLS.Mode)
	assert.Nil(t, v.PodAnnotations)

	// PVC mode runs 1 pod, as upstream, whatever replicas says (one pod
	// mounts a ReadWriteOnce claim); TestReplicasWithAClaim has the rest.
	v, err = translate(sample(t, func(cr *trustyv1.TrustyAIService) { cr.Spec.Replicas = ptr.To[int32](3) }), in)
	require.NoError(t, err)
	assert.Equal(t, int32(1), v.Replicas)

	// A claim never shrinks.
	claimed := resource.MustParse("5Gi")
	in.ClaimedStorage = &claimed
	v, err = translate(sample(t, nil), in)
	require.NoError(t, err)
	assert.Equal(t, "5Gi", v.Storage.Size)
	in.ClaimedStorage = nil

	// DATABASE: the Secret, the CA when it exists, a migration with folder and data file.
	db := sample(t, func(cr *trustyv1.TrustyAIService) {
		cr.Spec.Storage = trustyv1.StorageSpec{Format: "DATABASE", DatabaseConfigurations: "db-credentials"}
		cr.Spec.Data = trustyv1.DataSpec{}
	})
	in.DatabaseCA = true
	db.Spec.Replicas = ptr.To[int32](3)
	v, err = translate(db, in)
	require.NoError(t, err)
	assert.Equal(t, storageValues{Format: "DATABASE", DatabaseSecret: "db-credentials", DatabaseCA: true}, v.Storage)
	assert.Equal(t, int32(3), v.Replicas, "DATABASE mode runs spec.replicas")
	db.Spec.Storage.Folder, db.Spec.Storage.Size, db.Spec.Data.Filename = "/inputs", "1Gi", "data.csv"
	v, err = translate(db, in)
	require.NoError(t, err)
	assert.True(t, v.Storage.Migration)
	assert.Equal(t, int32(1), v.Replicas, "a migration mounts the claim: 1 pod")
	assert.Equal(t, "1Gi", v.Storage.Size)

	// cert-manager: the issuer of the settings.
	in = inputs(Settings{IssuerKind: "ClusterIssuer", IssuerName: "ca"}, release.NewCapabilities(platform.Certificate)).values
	v, err = translate(sample(t, nil), in)
	require.NoError(t, err)
	assert.Equal(t, tlsValues{Mode: platform.TLSCertManager, IssuerKind: "ClusterIssuer", IssuerName: "ca"}, v.TLS)
	in = inputs(Settings{IssuerKind: "ClusterIssuer", IssuerName: "ca"}, release.NewCapabilities(platform.SCC, platform.Certificate)).values
	v, err = translate(sample(t, nil), in)
	require.NoError(t, err)
	assert.Equal(t, tlsValues{Mode: platform.TLSOpenShift}, v.TLS, "OpenShift's service CA first")
	assert.True(t, v.Trust.ServiceCA)
}

// What upstream panics on or fails late is refused, naming the field.
func TestTranslateRefuses(t *testing.T) {
	in := inputs(defaults, release.NewCapabilities()).values
	for _, tc := range []struct {
		field string
		mut   func(*trustyv1.TrustyAIService)
	}{
		{"spec.storage.size", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "" }},
		{"spec.storage.size", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "lots" }},
		{"spec.storage.size", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "-1Gi" }},
		{"spec.storage.folder", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Folder = "" }},
		{"spec.storage.folder", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Folder = "inputs" }},
		{"spec.storage.format", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Format = "S3" }},
		{"spec.metrics.schedule", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "" }},
		{"spec.metrics.batchSize", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.BatchSize = ptr.To(0) }},
		{"spec.replicas", func(cr *trustyv1.TrustyAIService) { cr.Spec.Replicas = ptr.To[int32](-1) }},
	} {
		_, err := translate(sample(t, tc.mut), in)
		var f *status.Failure
		require.ErrorAs(t, err, &f, tc.field)
		assert.Equal(t, tc.field, f.Field)
		assert.Equal(t, status.ReasonInvalidSpec, f.Reason)
	}
}

func TestSettings(t *testing.T) {
	s, err := ParseSettings(nil, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, defaults, s)
	env := []string{EnvServiceImage + "=mirror/tas@sha256:1", trustyaifamily.EnvProxyImage + "=mirror/proxy:1"}
	s, err = ParseSettings(env, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "mirror/tas@sha256:1", s.ServiceImage)
	assert.Equal(t, "mirror/proxy:1", s.ProxyImage)
	s, err = ParseSettings(env, map[string]string{KeyServiceImage: " admin/tas:2\n", trustyaifamily.KeyProxyImage: "admin/proxy:2", KeyCertManagerIssuer: "ClusterIssuer/corp-ca"}, nil)
	require.NoError(t, err)
	assert.Equal(t, Settings{ServiceImage: "admin/tas:2", ProxyImage: "admin/proxy:2", IssuerKind: "ClusterIssuer", IssuerName: "corp-ca", Wiring: true}, s)
	s, err = ParseSettings(nil, map[string]string{KeyWiring: "disabled", KeyServerless: "enabled"}, nil)
	require.NoError(t, err)
	assert.False(t, s.Wiring)
	assert.True(t, s.Serverless)
	for key, bad := range map[string]string{KeyCertManagerIssuer + "1": "corp-ca", KeyCertManagerIssuer + "2": "Secret/x", KeyCertManagerIssuer + "3": "Issuer/", KeyCertManagerIssuer + "4": "Issuer/a b", KeyWiring: "off", KeyServerless: "yes"} {
		key = strings.TrimRight(key, "1234")
		_, err = ParseSettings(nil, map[string]string{key: bad}, nil)
		var f *status.Failure
		require.ErrorAs(t, err, &f, bad)
		assert.Equal(t, status.ReasonInvalidOperatorSettings, f.Reason)
		assert.Contains(t, f.Error(), key)
	}
}

var t0 = metav1.Unix(10, 0)

func TestComputeStatus(t *testing.T) {
	ready := readyDeployment(1)
	pvc := boundClaim("1Gi")
	q := resource.MustParse("1Gi")
	for _, tc := range []struct {
		name   string
		o      observed
		phase  string
		reason string // of Ready
	}{
		{"PVC mode, all ready", observed{Observed: status.Observed{Applied: true}, Replicas: 1, UsesClaim: true, Requested: &q, Claim: pvc, Deployment: ready, Ingress: true}, trustyv1.PhaseReady, "AllComponentsReady"},
		{"claim pending", observed{Observed: status.Observed{Applied: true}, Replicas: 1, UsesClaim: true, Requested: &q, Claim: boundClaim("1Gi", "Pending"), Deployment: ready, Ingress: true}, trustyv1.PhaseNotReady, "ComponentsNotReady"},
		{"Route not admitted", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: ready, RouteRendered: true, Route: route(false)}, trustyv1.PhaseNotReady, "ComponentsNotReady"},
		{"Route admitted", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Deployment: ready, RouteRendered: true, Route: route(true)}, trustyv1.PhaseReady, "AllComponentsReady"},
		{"DB credentials missing", observed{Observed: status.Observed{Applied: true}, Replicas: 1, Database: true, DB: dbState{Reason: "DBCredentialsNotFound", Message: "no Secret"}, Deployment: readyDeployment(0), Ingress: true}, trustyv1.PhaseNotReady, "DBNotReady"},
		{"invalid spec", observed{Observed: status.Observed{Failure: &status.Failure{Reason: "InvalidSpec", Message: "bad"}}, Replicas: 1}, trustyv1.PhaseNotReady, "InvalidSpec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Generation, tc.o.Now = 3, t0
			st := computeStatus(trustyv1.TrustyAIServiceStatus{}, tc.o)
			assert.Equal(t, tc.phase, st.Phase)
			assert.Equal(t, int64(3), st.ObservedGeneration)
			r := find(st.Conditions, status.TypeReady)
			require.NotNil(t, r)
			assert.Equal(t, tc.reason, r.Reason, r.Message)
			assert.Equal(t, string(r.Status), string(st.Ready), "the deprecated ready field follows the condition")
			for _, typ := range []string{TypeProvisioningSucceeded, TypeDegraded, TypeAvailable, TypeRouteAvailable, TypeTLSAvailable, status.TypeTrustReady, status.TypeDeploymentReady} {
				assert.NotNil(t, find(st.Conditions, typ), typ)
			}
			assert.Equal(t, tc.o.UsesClaim, find(st.Conditions, TypePVCAvailable) != nil, "PVCAvailable only with a claim")
			assert.Equal(t, tc.o.Database, find(st.Conditions, TypeDBAvailable) != nil, "DBAvailable only in DATABASE mode")
			again := computeStatus(st, tc.o)
			assert.Equal(t, st, again, "stable")
		})
	}
}

func TestDBProblem(t *testing.T) {
	assert.Equal(t, dbState{}, dbProblem(nil, "db"))
	missing := waitingPod("CreateContainerConfigError", `secret "db" not found`)
	assert.Equal(t, "DBCredentialsNotFound", dbProblem(missing, "db").Reason)
	key := waitingPod("CreateContainerConfigError", `couldn't find key databasePort in Secret team-a/db`)
	got := dbProblem(key, "db")
	assert.Equal(t, "DBCredentialsError", got.Reason)
	assert.Contains(t, got.Message, "databasePort")
	assert.Equal(t, dbState{}, dbProblem(waitingPod("ContainerCreating", ""), "db"))
	assert.Equal(t, dbState{}, dbProblem(waitingPod("CreateContainerConfigError", `secret "other" not found`), "db"), "another Secret is not the database's")
}

func TestRecheck(t *testing.T) {
	k := &Kind{}
	cr := sample(t, nil)
	assert.Zero(t, k.Recheck(cr), "PVC mode, nothing unwatched pending")
	since := func(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(-d)) }
	cr.Status.Conditions = []metav1.Condition{{Type: TypeRouteAvailable, Status: metav1.ConditionFalse, Reason: "RouteNotAdmitted", LastTransitionTime: since(0)}}
	assert.Equal(t, 10*time.Second, k.Recheck(cr), "a router's admission is not watched: 10 s at first")
	cr.Status.Conditions[0].LastTransitionTime = since(time.Hour)
	assert.Equal(t, 10*time.Minute, k.Recheck(cr), "then as long as it has waited, at most 10 minutes: no endless 10 s polling")
	cr.Status.Conditions[0].Status = metav1.ConditionTrue
	cr.Spec.Storage.Format = trustyv1.StorageDatabase
	assert.Zero(t, k.Recheck(cr), "DATABASE mode with the database available: the reconcile period")
	cr.Status.Conditions = append(cr.Status.Conditions, metav1.Condition{Type: TypeDBAvailable, Status: metav1.ConditionFalse, Reason: "DBCredentialsNotFound", LastTransitionTime: since(30 * time.Second)})
	assert.InDelta(t, float64(30*time.Second), float64(k.Recheck(cr)), float64(2*time.Second), "what the kubelet says of the credentials is not watched")
	assert.InDelta(t, float64(30*time.Second), float64(release.Register[*trustyv1.TrustyAIService, *Inputs](k).Recheck(cr)), float64(2*time.Second), "through the registry's adapter")
	cr.Spec.Storage.Format = trustyv1.StoragePVC
	cr.Status.Conditions = append(cr.Status.Conditions[:1], metav1.Condition{Type: TypeInferenceServicesPresent, Status: metav1.ConditionFalse, Reason: ReasonRevertedByAnother})
	assert.Equal(t, wiringWindow, k.Recheck(cr), "the write budget's window, while another controller reverts the wiring")
}

// Upstream's db-migration annotation asks for what every reconcile does
// here: the migration comes from the spec, and the annotation changes no
// rendered byte (nor is it removed: nothing writes a user's metadata).
func TestDBMigrationAnnotationChangesNothing(t *testing.T) {
	migrating := func(cr *trustyv1.TrustyAIService) {
		cr.Spec.Storage.Format = trustyv1.StorageDatabase
		cr.Spec.Storage.DatabaseConfigurations = "db-credentials"
	}
	plain := render1(t, sample(t, migrating), release.NewCapabilities(), "")
	annotated := sample(t, func(cr *trustyv1.TrustyAIService) {
		migrating(cr)
		cr.Annotations = map[string]string{AnnotationDBMigration: "true"}
	})
	assert.Equal(t, plain, render1(t, annotated, release.NewCapabilities(), ""))
	assert.Contains(t, plain, "DATABASE_ATTEMPT_MIGRATION", "the spec alone makes it a migration: the claim stays mounted")
	assert.Equal(t, map[string]string{AnnotationDBMigration: "true"}, annotated.Annotations, "rendering leaves the annotation")
}
