//go:build realkueue

// The same LMEvalJobs under Kueue's own controller manager (cmd/kueue of
// v0.17.0, built by `hack/tools.sh kueue-manager`): `make test-kueue`. Not
// in make test, for its build (345 s on 2 cores the first time, modules downloaded);
// the tests without the tag check the same protocol against Kueue's CRDs.
//
// Kueue runs as a process without webhooks (none registered with the API
// server; its own certificate management off) and without leader
// election. It reads its metrics certificate from a fixed path,
// /etc/kueue/metrics/certs, which the test fills when it is empty: the
// test needs that folder writable.
package kueue

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// metricsCerts is where Kueue reads its metrics certificate without its own
// certificate management (cmd/kueue/main.go).
const metricsCerts = "/etc/kueue/metrics/certs"

// writeCert writes a self-signed certificate for 127.0.0.1 as tls.crt and
// tls.key into dir, unless both are there.
func writeCert(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "tls.key")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "tls.crt")); err == nil {
			return
		}
	}
	require.NoError(t, os.MkdirAll(dir, 0o755), "Kueue's metrics certificate folder must be writable")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kueue"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
}

// startKueue runs Kueue's controller manager against the test's API server.
func startKueue(t *testing.T) {
	t.Helper()
	bin := os.Getenv("KUEUE_BINARY")
	require.NotEmpty(t, bin, "KUEUE_BINARY: run make test-kueue")
	dir := t.TempDir()
	writeCert(t, metricsCerts)
	writeCert(t, filepath.Join(dir, "webhook"))
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: restCfg.Host, CertificateAuthorityData: restCfg.CAData}
	kc.AuthInfos["kueue"] = &clientcmdapi.AuthInfo{ClientCertificateData: restCfg.CertData, ClientKeyData: restCfg.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "kueue"}
	kc.CurrentContext = "test"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, kubeconfig))
	config := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: `+freePort(t)+`, host: 127.0.0.1, certDir: `+filepath.Join(dir, "webhook")+`}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "0"}
integrations:
  frameworks: ["batch/job"]
  # As upstream's README asks Kueue to know LMEvalJobs.
  externalFrameworks: ["LMEvalJob.v1alpha1.trustyai.opendatahub.io"]
featureGates: {VisibilityOnDemand: false}
`), 0o600))
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}})))
	log, err := os.Create(filepath.Join(dir, "kueue.log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, "--config", config, "--kubeconfig", kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("Kueue's log:\n%s", framework.Tail(string(b), 40))
		}
	})
}

// freePort is a loopback port free now (Kueue's webhook server listens,
// though no webhook is registered).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func kueueObject(t *testing.T, kind, ns, name string, spec map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(lmeval.KueueGVK("v1beta2", kind))
	u.SetName(name)
	u.SetNamespace(ns)
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), u)))
}

// Upstream's Kueue example under Kueue itself: a ClusterQueue of 3 CPUs on
// one flavor. The first job (2 CPUs) is admitted and placed on the
// flavor's nodes; a second waits, named by Kueue's own message, until the
// first finishes and its Workload frees the quota. Deactivated by Kueue
// (spec.active false), the second loses its pod and hands its quota back;
// reactivated, it is admitted again and completes.
func TestUnderKueuesControllerManager(t *testing.T) {
	startKueue(t)
	ns := env.NewNamespace(t, "real-kueue")
	kueueObject(t, "ResourceFlavor", "", "real-flavor", map[string]any{"nodeLabels": map[string]any{"example.com/pool": "real"}})
	kueueObject(t, "ClusterQueue", "", "cluster-queue", map[string]any{"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{"coveredResources": []any{"cpu", "memory"}, "flavors": []any{map[string]any{"name": "real-flavor",
			"resources": []any{map[string]any{"name": "cpu", "nominalQuota": "3"}, map[string]any{"name": "memory", "nominalQuota": "50Gi"}}}}}}})
	kueueObject(t, "LocalQueue", ns, "user-queue", map[string]any{"clusterQueue": "cluster-queue"})

	first := createJob(t, ns, nil)
	start := time.Now()
	waitJob(t, first, lmv1alpha1.JobStateScheduled, "")
	t.Logf("the first job admitted by Kueue %v after its creation", time.Since(start).Round(time.Millisecond))
	require.Equal(t, "real", pod(t, first).Spec.NodeSelector["example.com/pool"], "placed by the flavor")

	second := createJobWith(t, ns, "second", nil)
	waitJob(t, second, lmv1alpha1.JobStateSuspended, "")
	c := admittedCondition(t, second, metav1.ConditionFalse, lmeval.ReasonPending)
	env.Eventually(t, "Kueue's reason on the job", func() error {
		c = admittedCondition(t, second, metav1.ConditionFalse, lmeval.ReasonPending)
		if !regexpInsufficient.MatchString(c.Message) {
			return errorf("message %q", c.Message)
		}
		return nil
	})
	t.Logf("the second job waits: %s", c.Message)
	noPod(t, second)

	finishPod(t, first)
	waitJob(t, first, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	workload(t, first, "the first Workload Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded"))
	start = time.Now()
	waitJob(t, second, lmv1alpha1.JobStateScheduled, "")
	t.Logf("the second job admitted %v after the first finished", time.Since(start).Round(time.Millisecond))

	wl := workload(t, second, "the second Workload", exists)
	require.NoError(t, k8s.Patch(context.Background(), wl, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"active":false}}`))))
	waitJob(t, second, lmv1alpha1.JobStateSuspended, "")
	env.Eventually(t, "the pod deleted", env.GoneFrom(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: second.Name}}))
	workload(t, second, "the quota handed back", func(wl *unstructured.Unstructured) error {
		if _, has, _ := unstructured.NestedMap(wl.Object, "status", "admission"); has {
			return errorf("status.admission still set")
		}
		return hasCondition("QuotaReserved", metav1.ConditionFalse, "")(wl)
	})
	wl = workload(t, second, "the second Workload", exists)
	require.NoError(t, k8s.Patch(context.Background(), wl, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"active":true}}`))))
	waitJob(t, second, lmv1alpha1.JobStateScheduled, "")
	env.Eventually(t, "Resumed event", func() error { return env.HasReason(t, ns, second.Name, lmeval.EventResumed) })
	finishPod(t, second)
	waitJob(t, second, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
	workload(t, second, "the second Workload Finished", hasCondition("Finished", metav1.ConditionTrue, "Succeeded"))
}
