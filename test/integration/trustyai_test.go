package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/trustyai"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"time"
)

// upstreamV1alpha1 is upstream's v1alpha1 sample with a status as upstream's
// operator writes it.
const upstreamV1alpha1 = `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: TrustyAIService
metadata:
  name: example-trustyai-service
spec:
  storage:
    format: "PVC"
    folder: "/inputs"
    size: "1Gi"
  data:
    filename: "data.csv"
    format: "CSV"
  metrics:
    schedule: "5s"
`

func tasCondition(cr *trustyv1.TrustyAIService, typ string) *metav1.Condition {
	for i := range cr.Status.Conditions {
		if cr.Status.Conditions[i].Type == typ {
			return &cr.Status.Conditions[i]
		}
	}
	return nil
}

// waitTAS waits until the CR's condition has the status and reason.
func waitTAS(t *testing.T, ns, name, typ string, st metav1.ConditionStatus, reason string) *trustyv1.TrustyAIService {
	t.Helper()
	cr := &trustyv1.TrustyAIService{}
	env.Eventually(t, fmt.Sprintf("%s %s=%s %s", name, typ, st, reason), func() error {
		if err := env.Get(ns, name, cr); err != nil {
			return err
		}
		c := tasCondition(cr, typ)
		if c == nil || c.Status != st || c.Reason != reason || c.ObservedGeneration != cr.Generation {
			return fmt.Errorf("conditions %+v", cr.Status.Conditions)
		}
		return nil
	})
	return cr
}

// Upstream's samples apply through either version, and nothing a version
// holds is lost when the object is read through the other (conversion None
// with schemas of the same fields).
func TestTrustyAIServiceUpstreamSampleAndConversion(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(upstreamV1alpha1), &u.Object))
	u.SetNamespace(ns)
	require.NoError(t, k8s.Create(context.Background(), u))

	// The operator reads and writes v1: its status, conditions with
	// observedGeneration, comes back whole through v1alpha1.
	cr := waitTAS(t, ns, "example-trustyai-service", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	assert.Equal(t, "PVC", cr.Spec.Storage.Format)
	assert.Equal(t, "Not Ready", cr.Status.Phase, "no pods run in envtest")
	alpha := &unstructured.Unstructured{}
	alpha.SetAPIVersion("trustyai.opendatahub.io/v1alpha1")
	alpha.SetKind("TrustyAIService")
	require.NoError(t, env.Get(ns, cr.Name, alpha))
	v1 := &unstructured.Unstructured{}
	v1.SetAPIVersion("trustyai.opendatahub.io/v1")
	v1.SetKind("TrustyAIService")
	require.NoError(t, env.Get(ns, cr.Name, v1))
	for _, path := range [][]string{{"spec"}, {"status"}} {
		a, _, _ := unstructured.NestedFieldCopy(alpha.Object, path...)
		b, _, _ := unstructured.NestedFieldCopy(v1.Object, path...)
		assert.Equal(t, b, a, "%v differs between the versions", path)
	}
	conds, _, _ := unstructured.NestedSlice(alpha.Object, "status", "conditions")
	require.NotEmpty(t, conds)
	assert.Contains(t, conds[0], "observedGeneration", "v1alpha1 keeps what v1 writes")

	// A v1 object written with every field reads back whole through v1alpha1.
	full := framework.TAS(ns, "full")
	full.Spec.Replicas = ptr.To[int32](2)
	full.Spec.Metrics.BatchSize = ptr.To(100)
	full.Spec.Storage.DatabaseConfigurations = "db"
	require.NoError(t, k8s.Create(context.Background(), full))
	alpha = &unstructured.Unstructured{}
	alpha.SetAPIVersion("trustyai.opendatahub.io/v1alpha1")
	alpha.SetKind("TrustyAIService")
	require.NoError(t, env.Get(ns, "full", alpha))
	spec, _, _ := unstructured.NestedMap(alpha.Object, "spec")
	assert.Equal(t, map[string]any{
		"replicas": int64(2),
		"storage":  map[string]any{"format": "PVC", "folder": "/inputs", "size": "1Gi", "databaseConfigurations": "db"},
		"data":     map[string]any{"filename": "data.csv", "format": "CSV"},
		"metrics":  map[string]any{"schedule": "5s", "batchSize": int64(100)},
	}, spec)
}

// The objects upstream creates, by upstream's names; edits roll out (upstream
// never updates its Deployment); delete removes everything but the PVC, the
// proxy's ClusterRoleBinding included.
func TestTrustyAIServiceLifecycle(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "trustyai-service")))
	cr := waitTAS(t, ns, "trustyai-service", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	assert.Contains(t, cr.Finalizers, release.Finalizer)

	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "trustyai-service", dep))
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	names := []string{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"trustyai-service", "kube-rbac-proxy"}, names)
	for name, obj := range map[string]client.Object{
		"trustyai-service":                        &corev1.Service{},
		"trustyai-service-tls":                    &corev1.Service{},
		"trustyai-service-pvc":                    &corev1.PersistentVolumeClaim{},
		"trustyai-service-proxy":                  &corev1.ServiceAccount{},
		"trustyai-service-kube-rbac-proxy-config": &corev1.ConfigMap{},
	} {
		assert.NoError(t, env.Get(ns, name, obj), "%T %s", obj, name)
	}
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "trustyai-service", &networkingv1.Ingress{})), "no Route API and no trustyai-ingress-domain: no Ingress")
	assert.Nil(t, tasCondition(cr, "RouteAvailable"), "nothing exposes the service: no RouteAvailable")
	binding := &rbacv1.ClusterRoleBinding{}
	require.NoError(t, env.Get("", "trustyai-proxy."+ns+".trustyai-service", binding))
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "trustyai-service-proxy"}}, binding.Subjects)
	assert.Equal(t, "ai-stack-operator-trustyai-proxy", binding.RoleRef.Name)
	c := tasCondition(cr, "TLSAvailable")
	require.NotNil(t, c)
	assert.Equal(t, "NoCertificateIssuer", c.Reason, "no OpenShift and no cert-manager here")
	assert.Len(t, releaseRecordsOf(t, "tas", ns, "trustyai-service"), 1)

	// Every edit rolls out; PVC mode runs 1 pod whatever replicas says (one
	// pod mounts the ReadWriteOnce claim, as upstream runs 1), and
	// ReplicasHonored says so, with a Warning event.
	patchTAS(t, ns, "trustyai-service", func(cr *trustyv1.TrustyAIService) {
		cr.Spec.Replicas = ptr.To[int32](2)
		cr.Spec.Metrics.Schedule = "PT10S"
	})
	env.Eventually(t, "the edit rolled out", func() error {
		if err := env.Get(ns, "trustyai-service", dep); err != nil {
			return err
		}
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "SERVICE_METRICS_SCHEDULE" && e.Value == "PT10S" && *dep.Spec.Replicas == 1 {
				return nil
			}
		}
		return fmt.Errorf("replicas %d, env %v", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Env)
	})
	cr = waitTAS(t, ns, "trustyai-service", "ReplicasHonored", metav1.ConditionFalse, "ReplicasIgnored")
	assert.Contains(t, tasCondition(cr, "ReplicasHonored").Message, "spec.replicas is 2, but PVC mode runs 1 pod")
	env.Eventually(t, "a ReplicasIgnored event", func() error { return env.HasReason(t, ns, "trustyai-service", "ReplicasIgnored") })
	patchTAS(t, ns, "trustyai-service", func(cr *trustyv1.TrustyAIService) { cr.Spec.Replicas = nil })
	env.Eventually(t, "ReplicasHonored gone", func() error {
		if err := env.Get(ns, "trustyai-service", cr); err != nil {
			return err
		}
		if c := tasCondition(cr, "ReplicasHonored"); c != nil {
			return fmt.Errorf("ReplicasHonored %s %s", c.Status, c.Reason)
		}
		return nil
	})

	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "trustyai-service", &trustyv1.TrustyAIService{}) })
	assert.NoError(t, env.Gone(ns, "trustyai-service", &appsv1.Deployment{}))
	assert.NoError(t, env.Gone(ns, "trustyai-service-tls", &corev1.Service{}))
	assert.NoError(t, env.Gone("", binding.Name, &rbacv1.ClusterRoleBinding{}), "the cluster-scoped binding goes with the CR")
	assert.NoError(t, env.Get(ns, "trustyai-service-pvc", &corev1.PersistentVolumeClaim{}), "the data outlives the service")
	assert.Empty(t, releaseRecordsOf(t, "tas", ns, "trustyai-service"))
}

// The API refuses what upstream panics on or fails late, naming the field.
func TestTrustyAIServiceValidation(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	for _, tc := range []struct {
		name, want string
		mut        func(*trustyv1.TrustyAIService)
	}{
		{"zero size", "spec.storage.size", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "0" }},
		{"garbage size", "spec.storage.size", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "lots" }},
		{"no size in PVC mode", "spec.storage.size is required when spec.storage.format is PVC", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Size = "" }},
		{"no folder in PVC mode", "spec.storage.folder is required", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Folder = "" }},
		{"relative folder", "spec.storage.folder", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Folder = "inputs" }},
		{"unknown format", "spec.storage.format", func(cr *trustyv1.TrustyAIService) { cr.Spec.Storage.Format = "S3" }},
		{"bad schedule", "spec.metrics.schedule", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "often" }},
		// What the service cannot parse (it would compute every 30 s), or
		// parses as no pause.
		{"schedule 1h30m", "must be an ISO-8601 duration in weeks, days, hours, minutes and seconds", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "1h30m" }},
		{"schedule 500ms", "must be an ISO-8601 duration", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "500ms" }},
		{"schedule P1M", "must be an ISO-8601 duration", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "P1M" }},
		{"schedule 0s", "must be at least 1 second", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "0s" }},
		{"schedule PT", "must be at least 1 second", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "PT" }},
		{"schedule PT0.5S", "must be at least 1 second", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "PT0.5S" }},
		{"schedule P1000000000D", "must be shorter than 1000000000 days", func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = "P1000000000D" }},
		{"dotted name", "metadata.name must be a DNS-1035 label", func(cr *trustyv1.TrustyAIService) { cr.Name = "a.b" }},
		{"long name", "metadata.name must be a DNS-1035 label", func(cr *trustyv1.TrustyAIService) { cr.Name = strings.Repeat("a", 60) }},
		{"YAML in a Secret name", "spec.storage.databaseConfigurations", func(cr *trustyv1.TrustyAIService) {
			cr.Spec.Storage.DatabaseConfigurations = "x\nkind: ClusterRole"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := framework.TAS(ns, "v")
			tc.mut(cr)
			err := k8s.Create(context.Background(), cr)
			require.True(t, apierrors.IsInvalid(err), "want a refusal, got %v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// DATABASE mode needs neither folder nor size.
	db := framework.TAS(ns, "db")
	db.Spec.Storage = trustyv1.StorageSpec{Format: "DATABASE"}
	require.NoError(t, k8s.Create(context.Background(), db))
	// Both forms the service parses.
	for i, schedule := range []string{"PT30S", "P1DT2H30M45S", "PT1.5S", "30s", "1d"} {
		cr := framework.TAS(ns, fmt.Sprintf("schedule-%d", i))
		cr.Spec.Metrics.Schedule = schedule
		require.NoError(t, k8s.Create(context.Background(), cr), schedule)
	}
}

// A ClusterRoleBinding of the proxy's name that the operator did not create
// is a NameConflict: left alone, nothing applied.
func TestTrustyAIServiceProxyBindingConflict(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	foreign := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "trustyai-proxy." + ns + ".tas"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "someone"}},
	}
	require.NoError(t, k8s.Create(context.Background(), foreign))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), foreign) })
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "tas")))
	cr := waitTAS(t, ns, "tas", "ProvisioningSucceeded", metav1.ConditionFalse, "NameConflict")
	assert.Contains(t, tasCondition(cr, "ProvisioningSucceeded").Message, "ClusterRoleBinding "+foreign.Name+" exists and was not created by the operator")
	got := &rbacv1.ClusterRoleBinding{}
	require.NoError(t, env.Get("", foreign.Name, got))
	assert.Equal(t, foreign.Subjects, got.Subjects, "not overwritten")
	assert.Error(t, env.Get(ns, "tas", &appsv1.Deployment{}), "nothing applied")

	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	require.NoError(t, env.Get("", foreign.Name, got), "not deleted either")
}

// Objects the upstream operator created (no Helm ownership) give a
// NameConflict instead of a failed install loop, and upstream's finalizer on
// an existing CR is left alone.
func TestTrustyAIServiceCoexistsWithUpstream(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	upstream := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old-tls", Labels: map[string]string{"app.kubernetes.io/part-of": "trustyai"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
	require.NoError(t, k8s.Create(context.Background(), upstream))
	cr := framework.TAS(ns, "old")
	cr.Finalizers = []string{"trustyai.opendatahub.io/finalizer"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	got := waitTAS(t, ns, "old", "ProvisioningSucceeded", metav1.ConditionFalse, "NameConflict")
	assert.Contains(t, tasCondition(got, "ProvisioningSucceeded").Message, "Service "+ns+"/old-tls exists and was not created by the operator")
	assert.ElementsMatch(t, []string{"trustyai.opendatahub.io/finalizer", release.Finalizer}, got.Finalizers)
	svc := &corev1.Service{}
	require.NoError(t, env.Get(ns, "old-tls", svc))
	assert.Empty(t, svc.Annotations["meta.helm.sh/release-name"], "the upstream Service is not adopted")

	// Deleting: the operator's finalizer goes, upstream's stays for upstream.
	require.NoError(t, k8s.Delete(context.Background(), got))
	env.Eventually(t, "only upstream's finalizer left", func() error {
		if err := env.Get(ns, "old", got); err != nil {
			return err
		}
		if len(got.Finalizers) != 1 || got.Finalizers[0] != "trustyai.opendatahub.io/finalizer" {
			return fmt.Errorf("finalizers %v", got.Finalizers)
		}
		return nil
	})
	patchTAS(t, ns, "old", func(cr *trustyv1.TrustyAIService) { cr.Finalizers = nil })
}

// DATABASE mode: Secret <name>-db-ca, once it exists, is mounted and the
// connection requires verified TLS; its removal is followed too. The
// operator looks at its metadata only.
func TestTrustyAIServiceDatabaseCA(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.TAS(ns, "db")
	cr.Spec.Storage = trustyv1.StorageSpec{Format: "DATABASE", DatabaseConfigurations: "db-credentials"}
	cr.Spec.Data = trustyv1.DataSpec{}
	require.NoError(t, k8s.Create(context.Background(), cr))
	waitTAS(t, ns, "db", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	jdbc := func() string {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, "db", dep); err != nil {
			return err.Error()
		}
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "QUARKUS_DATASOURCE_JDBC_URL" {
				return e.Value
			}
		}
		return ""
	}
	assert.NotContains(t, jdbc(), "requireSSL")
	assert.NoError(t, env.Gone(ns, "db-pvc", &corev1.PersistentVolumeClaim{}), "no claim in DATABASE mode")

	ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-db-ca"}, StringData: map[string]string{"ca.crt": newCA(t, "db")}}
	require.NoError(t, k8s.Create(context.Background(), ca))
	// No Secret watch: the next reconcile (any event, or the period) sees it.
	patchTAS(t, ns, "db", func(cr *trustyv1.TrustyAIService) { cr.Labels = map[string]string{"nudge": "1"} })
	env.Eventually(t, "TLS to the database", func() error {
		if !strings.Contains(jdbc(), "requireSSL=true&sslMode=verify-ca&serverSslCert=/etc/tls/db/ca.crt") {
			return fmt.Errorf("JDBC URL %q", jdbc())
		}
		return nil
	})
	require.NoError(t, k8s.Delete(context.Background(), ca))
	patchTAS(t, ns, "db", func(cr *trustyv1.TrustyAIService) { cr.Labels = map[string]string{"nudge": "2"} })
	env.Eventually(t, "no TLS without the CA", func() error {
		if strings.Contains(jdbc(), "requireSSL") {
			return fmt.Errorf("JDBC URL %q", jdbc())
		}
		return nil
	})
}

func patchTAS(t *testing.T, ns, name string, change func(*trustyv1.TrustyAIService)) {
	t.Helper()
	patchObject(t, ns, name, &trustyv1.TrustyAIService{}, change)
}

// Reconciling an unchanged TrustyAIService sends no write at all, nor one
// whose spec.replicas PVC mode does not run (ReplicasHonored is False).
func TestTrustyAIServiceUnchangedWritesNothing(t *testing.T) {
	t.Parallel()
	for _, replicas := range []*int32{nil, ptr.To[int32](3)} {
		ns := env.NewNamespace(t, "")
		cr := framework.TAS(ns, "quiet")
		cr.Spec.Replicas = replicas
		require.NoError(t, k8s.Create(context.Background(), cr))
		waitTAS(t, ns, "quiet", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
		if replicas != nil {
			waitTAS(t, ns, "quiet", "ReplicasHonored", metav1.ConditionFalse, "ReplicasIgnored")
		}
		time.Sleep(3 * reconcilePeriod)
		before := &trustyv1.TrustyAIService{}
		require.NoError(t, env.Get(ns, "quiet", before))
		mark := operatorRequests.mark()
		// Several reconciles of the unchanged CR.
		operatorRequests.waitReconciles(t, naming.ReleaseName("tas", ns, "quiet"), mark, 5)
		assert.Empty(t, operatorRequests.writesAbout(ns, mark), "reconciling an unchanged CR must send no write at all (replicas %v)", replicas)
		after := &trustyv1.TrustyAIService{}
		require.NoError(t, env.Get(ns, "quiet", after))
		assert.Equal(t, before.ResourceVersion, after.ResourceVersion)
	}
}

// With cert-manager's API: Certificates for <name>-tls and <name>-internal
// from a self-signed Issuer (or the issuer of the settings), mounted by the
// pods, and TLSAvailable says who issues them.
func TestTrustyAIServiceCertManager(t *testing.T) {
	installAPI(t, "cert-manager.io", "Certificate", "certificates", apiextensionsv1.NamespaceScoped)
	installAPI(t, "cert-manager.io", "Issuer", "issuers", apiextensionsv1.NamespaceScoped)
	t.Cleanup(func() {
		removeAPI(t, "certificates.cert-manager.io")
		removeAPI(t, "issuers.cert-manager.io")
	})
	time.Sleep(time.Second) // the suite's capability TTL is 500 ms
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "cm")))
	waitTAS(t, ns, "cm", "TLSAvailable", metav1.ConditionTrue, "CertManager")
	for _, name := range []string{"cm-tls", "cm-internal"} {
		cert := &unstructured.Unstructured{}
		cert.SetAPIVersion("cert-manager.io/v1")
		cert.SetKind("Certificate")
		require.NoError(t, env.Get(ns, name, cert), name)
		secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
		assert.Equal(t, name, secret)
		issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
		assert.Equal(t, "cm-selfsigned", issuer)
	}
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "cm", dep))
	assert.Contains(t, dep.Spec.Template.Spec.Containers[1].Args, "--tls-cert-file=/etc/tls/private/tls.crt")
}

func inferenceService(ns, name, mode string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("serving.kserve.io/v1beta1")
	u.SetKind("InferenceService")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetAnnotations(map[string]string{"serving.kserve.io/deploymentMode": mode})
	_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "predictor", "minReplicas")
	return u
}

func logger(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	u := inferenceService(ns, name, "")
	require.NoError(t, env.Get(ns, name, u))
	l, _, _ := unstructured.NestedMap(u.Object, "spec", "predictor", "logger")
	return l
}

// KServe's API appears after the operator started: its InferenceServices are
// watched from then on, without a restart, and RawDeployment ones log to the
// service by server-side apply of the logger alone; Serverless ones only with
// kServeServerless. A logger another manager set is not forced. Deleting the
// service gives back exactly what was applied.
func TestTrustyAIServiceKServeWiring(t *testing.T) {
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "tas")))
	waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionFalse, "InferenceServiceAPINotFound")

	installAPIVersion(t, "serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices", apiextensionsv1.NamespaceScoped)
	t.Cleanup(func() { removeAPI(t, "inferenceservices.serving.kserve.io") })
	require.NoError(t, k8s.Create(context.Background(), inferenceService(ns, "raw", "RawDeployment")))
	require.NoError(t, k8s.Create(context.Background(), inferenceService(ns, "serverless", "Serverless")))
	taken := inferenceService(ns, "taken", "RawDeployment")
	require.NoError(t, unstructured.SetNestedMap(taken.Object, map[string]any{"mode": "all", "url": "http://elsewhere"}, "spec", "predictor", "logger"))
	require.NoError(t, k8s.Create(context.Background(), taken))

	url := "http://tas." + ns + ".svc.cluster.local"
	env.Eventually(t, "the RawDeployment InferenceService logs to the service", func() error {
		if l := logger(t, ns, "raw"); l["url"] != url || l["mode"] != "all" {
			return fmt.Errorf("logger %v", l)
		}
		return nil
	})
	assert.Nil(t, logger(t, ns, "serverless"), "Serverless only with kServeServerless")
	assert.Equal(t, "http://elsewhere", logger(t, ns, "taken")["url"], "another manager's logger is not forced")
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionFalse, "FieldOwnedElsewhere")
	assert.Contains(t, tasCondition(cr, "InferenceServicesPresent").Message, "InferenceService taken")

	// Once the other manager's logger is gone, the service is found.
	require.NoError(t, k8s.Delete(context.Background(), taken))
	waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionTrue, "InferenceServicesFound")
	raw := inferenceService(ns, "raw", "")
	require.NoError(t, env.Get(ns, "raw", raw))
	rv := raw.GetResourceVersion()
	time.Sleep(5 * reconcilePeriod)
	require.NoError(t, env.Get(ns, "raw", raw))
	assert.Equal(t, rv, raw.GetResourceVersion(), "a configured InferenceService is not written again")

	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	assert.Nil(t, logger(t, ns, "raw"), "the logger the wiring applied is given back")
	require.NoError(t, env.Get(ns, "raw", raw))
	minReplicas, _, _ := unstructured.NestedInt64(raw.Object, "spec", "predictor", "minReplicas")
	assert.Equal(t, int64(1), minReplicas, "the user's fields stay")
	for _, m := range raw.GetManagedFields() {
		assert.NotEqual(t, "ai-stack-operator-trustyai", m.Manager, "nothing the wiring applied stays")
	}
}

// Open Data Hub's bundle reaches the service's pods as a merged bundle; a CA
// change there rolls them by the bundle's content hash.
func TestTrustyAIServiceTrust(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), configMap(ns, "odh-trusted-ca-bundle", map[string]string{"odh-ca-bundle.crt": newCA(t, "odh-1")})))
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "trusting")))
	waitTAS(t, ns, "trusting", "TrustReady", metav1.ConditionTrue, "BundleMerged")
	hash := waitAnnotation(t, ns, "trusting", "configmap.hash/ca-bundle", "")
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "trusting", dep))
	for _, c := range dep.Spec.Template.Spec.Containers {
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.Name == "ca-bundle"
		}
		assert.True(t, mounted, "container %s mounts the bundle", c.Name)
	}
	odh := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, "odh-trusted-ca-bundle", odh))
	odh.Data["odh-ca-bundle.crt"] = newCA(t, "odh-2")
	require.NoError(t, k8s.Update(context.Background(), odh))
	waitAnnotation(t, ns, "trusting", "configmap.hash/ca-bundle", hash)
}

// The images follow the settings ConfigMap (upstream's keys) when it changes,
// not only at start (upstream #23): the Deployment rolls to them. A broken
// setting of this kind is reported on the CR; nothing running changes.
func TestTrustyAIServiceImagesFollowTheSettings(t *testing.T) {
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "images")))
	images := func() []string {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, "images", dep); err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, c := range dep.Spec.Template.Spec.Containers {
			out = append(out, c.Name+"="+c.Image)
		}
		return out
	}
	waitImages := func(want ...string) {
		t.Helper()
		env.Eventually(t, fmt.Sprintf("images %v", want), func() error {
			if got := images(); fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("images %v", got)
			}
			return nil
		})
	}
	waitImages("trustyai-service=quay.io/trustyai/trustyai-service:latest", "kube-rbac-proxy="+trustyaifamily.DefaultProxyImage)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap},
		Data:       map[string]string{"trustyaiServiceImage": "mirror.example.com/trustyai@sha256:0123", "kube-rbac-proxy": "mirror.example.com/kube-rbac-proxy:v1"},
	}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	waitImages("trustyai-service=mirror.example.com/trustyai@sha256:0123", "kube-rbac-proxy=mirror.example.com/kube-rbac-proxy:v1")

	cm.Data["trustyai-model-server-wiring"] = "sometimes"
	require.NoError(t, k8s.Update(context.Background(), cm))
	cr := waitTAS(t, ns, "images", "ProvisioningSucceeded", metav1.ConditionFalse, "InvalidOperatorSettings")
	assert.Contains(t, tasCondition(cr, "ProvisioningSucceeded").Message, "trustyai-model-server-wiring")
	assert.Equal(t, []string{"trustyai-service=mirror.example.com/trustyai@sha256:0123", "kube-rbac-proxy=mirror.example.com/kube-rbac-proxy:v1"}, images(), "nothing running changes")

	require.NoError(t, k8s.Delete(context.Background(), cm))
	waitImages("trustyai-service=quay.io/trustyai/trustyai-service:latest", "kube-rbac-proxy="+trustyaifamily.DefaultProxyImage)
}

// Upstream's ConfigMap trustyai-service-operator-config in the operator's
// namespace still applies: its images are used when neither our settings key
// nor a RELATED_IMAGE_ variable names one, and a change to it alone
// reconciles the services. Our key wins over RELATED_IMAGE_, which wins over
// upstream's key (upstream's own order).
func TestTrustyAIServiceImagesFromUpstreamsConfigMap(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "images")))
	images := func() string {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, "images", dep); err != nil {
			return err.Error()
		}
		var out []string
		for _, c := range dep.Spec.Template.Spec.Containers {
			out = append(out, c.Name+"="+c.Image)
		}
		return strings.Join(out, " ")
	}
	waitImages := func(service, proxy string) {
		t.Helper()
		want := "trustyai-service=" + service + " kube-rbac-proxy=" + proxy
		env.Eventually(t, want, func() error {
			if got := images(); got != want {
				return fmt.Errorf("images %s", got)
			}
			return nil
		})
	}
	waitImages(trustyai.DefaultServiceImage, trustyaifamily.DefaultProxyImage)

	upstream := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "trustyai-service-operator-config"},
		Data:       map[string]string{"trustyaiServiceImage": "upstream.example.com/trustyai:1", "kube-rbac-proxy": "upstream.example.com/kube-rbac-proxy:1"},
	}
	require.NoError(t, k8s.Create(ctx, upstream))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), upstream) })
	waitImages("upstream.example.com/trustyai:1", "upstream.example.com/kube-rbac-proxy:1")

	// RELATED_IMAGE_ over upstream's key; the operator reads its environment
	// on each reconcile, which the ConfigMap's next change causes.
	t.Setenv(trustyai.EnvServiceImage, "env.example.com/trustyai:1")
	upstream.Data["kServeServerless"] = "enabled"
	require.NoError(t, k8s.Update(ctx, upstream))
	waitImages("env.example.com/trustyai:1", "upstream.example.com/kube-rbac-proxy:1")

	// Our settings key over both.
	ours := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap},
		Data:       map[string]string{"trustyaiServiceImage": "ours.example.com/trustyai:1", "kube-rbac-proxy": "ours.example.com/kube-rbac-proxy:1"},
	}
	require.NoError(t, k8s.Create(ctx, ours))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ours) })
	waitImages("ours.example.com/trustyai:1", "ours.example.com/kube-rbac-proxy:1")

	require.NoError(t, k8s.Delete(ctx, ours))
	waitImages("env.example.com/trustyai:1", "upstream.example.com/kube-rbac-proxy:1")
	require.NoError(t, k8s.Delete(ctx, upstream))
	waitImages("env.example.com/trustyai:1", trustyaifamily.DefaultProxyImage)
	cm := &corev1.ConfigMap{}
	assert.True(t, apierrors.IsNotFound(env.Get(operatorNamespace, "trustyai-service-operator-config", cm)), "the operator never writes upstream's ConfigMap")
}

// Upstream's db-migration annotation is read as upstream reads it (its
// change reconciles the CR, which renders the Deployment from the spec) and,
// unlike upstream, never removed: the operator writes no user's metadata.
func TestTrustyAIServiceKeepsTheDBMigrationAnnotation(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	cr := framework.TAS(ns, "migrating")
	cr.Annotations = map[string]string{trustyai.AnnotationDBMigration: "true", "team": "a"}
	require.NoError(t, k8s.Create(ctx, cr))
	waitTAS(t, ns, "migrating", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	time.Sleep(3 * reconcilePeriod)
	require.NoError(t, env.Get(ns, "migrating", cr))
	assert.Equal(t, map[string]string{trustyai.AnnotationDBMigration: "true", "team": "a"}, cr.Annotations)
	for _, m := range cr.ManagedFields {
		if m.Manager != "integration.test" && m.FieldsV1 != nil {
			assert.NotContains(t, m.FieldsV1.GetRawString(), "f:annotations", "%s %s: the operator writes no annotation of the CR", m.Manager, m.Operation)
		}
	}
}

// KServe uninstalled while a service had wired its InferenceServices: the
// CRD (and with it every InferenceService) is gone, and deleting the service
// still finishes (upstream #218, #62: CRs stuck on the finalizer).
func TestTrustyAIServiceDeletesAfterKServeIsGone(t *testing.T) {
	ns := env.NewNamespace(t, "")
	installAPIVersion(t, "serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices", apiextensionsv1.NamespaceScoped)
	removed := false
	t.Cleanup(func() {
		if !removed {
			removeAPI(t, "inferenceservices.serving.kserve.io")
		}
	})
	require.NoError(t, k8s.Create(context.Background(), inferenceService(ns, "raw", "RawDeployment")))
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "tas")))
	env.Eventually(t, "the InferenceService wired", func() error {
		if l := logger(t, ns, "raw"); l["mode"] != "all" {
			return fmt.Errorf("logger %v", l)
		}
		return nil
	})
	removeAPI(t, "inferenceservices.serving.kserve.io")
	removed = true
	cr := &trustyv1.TrustyAIService{}
	require.NoError(t, env.Get(ns, "tas", cr))
	require.NoError(t, k8s.Delete(context.Background(), cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
}

// A new TrustyAIService costs few writes too: its rendered objects and its
// CA bundle, the finalizer, the release record, one status, and one event,
// upstream's PVCCreated, which stands in for Installed; the bundle's first
// version is part of the install. A change of the bundle is an event of its
// own (the pods restart). The writes are printed for the record.
func TestNewTrustyAIServiceWrites(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), configMap(ns, "odh-trusted-ca-bundle", map[string]string{"odh-ca-bundle.crt": newCA(t, "odh-1")})))
	mark := operatorRequests.mark()
	require.NoError(t, k8s.Create(context.Background(), framework.TAS(ns, "count")))
	waitTAS(t, ns, "count", "TrustReady", metav1.ConditionTrue, "BundleMerged")
	waitTAS(t, ns, "count", "ProvisioningSucceeded", metav1.ConditionTrue, "ReleaseApplied")
	time.Sleep(5 * reconcilePeriod)
	writes := operatorRequests.writesAbout(ns, mark)
	events, creates := kindsOfWrites(writes, ns)
	t.Logf("%d writes for a new TrustyAIService (%d objects created, %d events):\n%s", len(writes), creates, events, strings.Join(writes, "\n"))
	assert.Equal(t, 1, events, "one event: upstream's PVCCreated")
	// Objects + 3 (the record's create is not listed) and upstream's
	// PVCCreated event, and one spare: on a loaded machine a second status
	// write was seen (fresh-clone CI, stop 43).
	assert.LessOrEqual(t, len(writes)+1, creates+5, "writes, the record's included, <= objects + 3, upstream's PVCCreated event and one spare status")
	require.NoError(t, env.HasReason(t, ns, "count", "PVCCreated"))
	assert.NotContains(t, env.EventReasons(t, ns, "count"), "Installed")
	assert.NotContains(t, env.EventReasons(t, ns, "count"), "CABundleUpdated")

	odh := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, "odh-trusted-ca-bundle", odh))
	odh.Data["odh-ca-bundle.crt"] = newCA(t, "odh-2")
	require.NoError(t, k8s.Update(context.Background(), odh))
	env.Eventually(t, "a CABundleUpdated event", func() error { return env.HasReason(t, ns, "count", "CABundleUpdated") })
}
