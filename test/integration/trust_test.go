package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust/trusttest"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// newCA returns a PEM self-signed CA certificate.
func newCA(t *testing.T, cn string) string { return trusttest.NewCA(t, cn) }

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// podTemplate returns the Deployment's pod template annotations and resourceVersion.
func podTemplate(t *testing.T, ns, name string) (map[string]string, string, *appsv1.Deployment) {
	t.Helper()
	dep := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, name, dep))
	return dep.Spec.Template.Annotations, dep.ResourceVersion, dep
}

// waitAnnotation waits until the pod template annotation differs from old (old "" = present).
func waitAnnotation(t *testing.T, ns, name, key, old string) string {
	t.Helper()
	var now string
	env.Eventually(t, "pod annotation "+key+" to change", func() error {
		dep := &appsv1.Deployment{}
		if err := env.Get(ns, name, dep); err != nil {
			return err
		}
		now = dep.Spec.Template.Annotations[key]
		if now == "" || now == old {
			return fmt.Errorf("%s = %q", key, now)
		}
		return nil
	})
	return now
}

// waitTrust waits for the TrustReady condition to have the reason, at the current generation.
func waitTrust(t *testing.T, ns, name, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	env.Eventually(t, "TrustReady "+reason, func() error {
		cr := &llamav1alpha1.LlamaStackDistribution{}
		if err := env.Get(ns, name, cr); err != nil {
			return err
		}
		c = condition(cr, status.TypeTrustReady)
		if cr.Status.ObservedGeneration != cr.Generation || c == nil || c.Reason != reason {
			return fmt.Errorf("TrustReady %+v", c)
		}
		return nil
	})
	return c
}

func bundleOf(t *testing.T, ns, cr string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, cr+"-ca-bundle", cm))
	return cm.Data["ca-bundle.crt"]
}

func TestExplicitCABundle(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	a, b := newCA(t, "ca-a"), newCA(t, "ca-b")
	src := configMap(ns, "my-cas", map[string]string{"a.crt": a + b, "b.crt": "# a comment line\r\n" + strings.ReplaceAll(b, "\n", "\r\n")})
	require.NoError(t, k8s.Create(context.Background(), src))

	cr := framework.LLSD(ns, "tls")
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{
		CABundle:    &llamav1alpha1.CABundleConfig{ConfigMapName: "my-cas", ConfigMapKeys: []string{"a.crt", "b.crt"}},
		PublicRoots: ptr.To(false),
	}
	require.NoError(t, k8s.Create(context.Background(), cr))
	c := waitTrust(t, ns, "tls", "BundleMerged")
	assert.Contains(t, c.Message, "2 certificates merged from ConfigMap "+ns+"/my-cas")
	assert.Equal(t, 2, strings.Count(bundleOf(t, ns, "tls"), "BEGIN CERTIFICATE"), "duplicates are merged once")

	ann, _, dep := podTemplate(t, ns, "tls")
	hash := ann[llamastack.AnnotationCABundleHash]
	require.NotEmpty(t, hash)
	ctr := dep.Spec.Template.Spec.Containers[0]
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "SSL_CERT_FILE", Value: "/etc/pki/ai-stack-operator/ca-bundle.crt"})
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "REQUESTS_CA_BUNDLE", Value: "/etc/pki/ai-stack-operator/ca-bundle.crt"})
	assert.Contains(t, ctr.VolumeMounts, corev1.VolumeMount{Name: "ca-bundle", MountPath: "/etc/pki/ai-stack-operator/", ReadOnly: true})

	// A label-only edit of the source rolls nothing.
	_, rvBefore, _ := podTemplate(t, ns, "tls")
	mark := operatorRequests.mark()
	require.NoError(t, env.Get(ns, "my-cas", src))
	src.Labels = map[string]string{"edited": "yes"}
	require.NoError(t, k8s.Update(context.Background(), src))
	env.Eventually(t, "a reconcile after the label edit", func() error {
		if operatorRequests.releaseLists(naming.ReleaseName("llsd", ns, "tls"), mark) == 0 {
			return fmt.Errorf("no reconcile yet")
		}
		return nil
	})
	time.Sleep(2 * reconcilePeriod)
	_, rvAfter, _ := podTemplate(t, ns, "tls")
	assert.Equal(t, rvBefore, rvAfter, "a label-only edit must not touch the Deployment")

	// A new certificate rolls the pods once.
	require.NoError(t, env.Get(ns, "my-cas", src))
	src.Data["b.crt"] = b + newCA(t, "ca-c")
	require.NoError(t, k8s.Update(context.Background(), src))
	newHash := waitAnnotation(t, ns, "tls", llamastack.AnnotationCABundleHash, hash)
	assert.Equal(t, 3, strings.Count(bundleOf(t, ns, "tls"), "BEGIN CERTIFICATE"))

	// Broken: the last good bundle stays, nothing restarts, the condition names source, key and block.
	good := bundleOf(t, ns, "tls")
	_, rvGood, _ := podTemplate(t, ns, "tls")
	require.NoError(t, env.Get(ns, "my-cas", src))
	src.Data["b.crt"] = b + "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
	require.NoError(t, k8s.Update(context.Background(), src))
	c = waitTrust(t, ns, "tls", "InvalidCertificate")
	assert.Contains(t, c.Message, "ConfigMap "+ns+"/my-cas")
	assert.Contains(t, c.Message, "b.crt")
	assert.Contains(t, c.Message, "block 2")
	assert.Contains(t, c.Message, "the last good bundle stays mounted")
	env.Eventually(t, "a warning event", func() error { return env.HasReason(t, ns, "tls", "InvalidCertificate") })
	assert.Equal(t, good, bundleOf(t, ns, "tls"))
	ann, rvBroken, _ := podTemplate(t, ns, "tls")
	assert.Equal(t, rvGood, rvBroken, "nothing restarts on a broken source")
	assert.Equal(t, newHash, ann[llamastack.AnnotationCABundleHash])
	got := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, env.Get(ns, "tls", got))
	assert.Equal(t, metav1.ConditionTrue, condition(got, status.TypeReconciled).Status, "the rest of the spec still applies")

	// Fixed.
	require.NoError(t, env.Get(ns, "my-cas", src))
	src.Data["b.crt"] = b
	require.NoError(t, k8s.Update(context.Background(), src))
	waitTrust(t, ns, "tls", "BundleMerged")
	waitAnnotation(t, ns, "tls", llamastack.AnnotationCABundleHash, newHash)
}

func TestCABundleSourceProblems(t *testing.T) {
	ns := env.NewNamespace(t, "")
	other := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "missing")
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "later"}}
	require.NoError(t, k8s.Create(context.Background(), cr))
	c := waitTrust(t, ns, "missing", "ConfigMapNotFound")
	assert.Contains(t, c.Message, "spec.server.tlsConfig.caBundle")
	assert.Contains(t, c.Message, "no bundle is mounted until this is fixed")
	ann, _, _ := podTemplate(t, ns, "missing")
	assert.Empty(t, ann[llamastack.AnnotationCABundleHash], "nothing to mount yet")

	// The ConfigMap appears without the default key, then with it: no label needed for the operator to notice.
	cm := configMap(ns, "later", map[string]string{"other.crt": newCA(t, "x")})
	require.NoError(t, k8s.Create(context.Background(), cm))
	c = waitTrust(t, ns, "missing", "InvalidCertificate")
	assert.Contains(t, c.Message, "ca-bundle.crt")
	cm.Data["ca-bundle.crt"] = newCA(t, "y")
	require.NoError(t, k8s.Update(context.Background(), cm))
	waitTrust(t, ns, "missing", "BundleMerged")
	waitAnnotation(t, ns, "missing", llamastack.AnnotationCABundleHash, "")

	// Another namespace: refused unless the administrator allows it, then read from there.
	require.NoError(t, k8s.Create(context.Background(), configMap(other, "shared-cas", map[string]string{"ca-bundle.crt": newCA(t, "shared")})))
	cross := framework.LLSD(ns, "cross")
	cross.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "shared-cas", ConfigMapNamespace: other}, PublicRoots: ptr.To(false)}
	require.NoError(t, k8s.Create(context.Background(), cross))
	c = waitTrust(t, ns, "cross", "CrossNamespaceRefused")
	assert.Contains(t, c.Message, "cross-namespace-ca-bundles: enabled")
	settingsCM := configMap(operatorNamespace, settingsConfigMap, map[string]string{"cross-namespace-ca-bundles": "enabled"})
	require.NoError(t, k8s.Create(context.Background(), settingsCM))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), settingsCM) })
	c = waitTrust(t, ns, "cross", "BundleMerged")
	assert.Contains(t, c.Message, "1 certificates merged from ConfigMap "+other+"/shared-cas")
}

func TestOpenDataHubBundle(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	odh := configMap(ns, "odh-trusted-ca-bundle", map[string]string{"ca-bundle.crt": newCA(t, "cluster"), "odh-ca-bundle.crt": "\n"})
	require.NoError(t, k8s.Create(context.Background(), odh))
	require.NoError(t, k8s.Create(context.Background(), framework.LLSD(ns, "odh")))
	c := waitTrust(t, ns, "odh", "BundleMerged")
	assert.Contains(t, c.Message, "ConfigMap "+ns+"/odh-trusted-ca-bundle, public roots")
	assert.Greater(t, strings.Count(bundleOf(t, ns, "odh"), "BEGIN CERTIFICATE"), 100, "public roots are in by default")
	hash := waitAnnotation(t, ns, "odh", llamastack.AnnotationCABundleHash, "")

	// A change to the ODH bundle rolls the pods.
	require.NoError(t, env.Get(ns, "odh-trusted-ca-bundle", odh))
	odh.Data["odh-ca-bundle.crt"] = newCA(t, "custom")
	require.NoError(t, k8s.Update(context.Background(), odh))
	waitAnnotation(t, ns, "odh", llamastack.AnnotationCABundleHash, hash)

	// Gone: the bundle goes too.
	require.NoError(t, k8s.Delete(context.Background(), odh))
	waitTrust(t, ns, "odh", "NoCustomTrust")
	env.Eventually(t, "the bundle ConfigMap to go", func() error { return env.Gone(ns, "odh-ca-bundle", &corev1.ConfigMap{}) })
	env.Eventually(t, "the mount to go", func() error {
		ann, _, _ := podTemplate(t, ns, "odh")
		if ann[llamastack.AnnotationCABundleHash] != "" {
			return fmt.Errorf("still annotated")
		}
		return nil
	})
}

func TestUserConfigRestartsByContent(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "uc")
	cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run"}
	require.NoError(t, k8s.Create(context.Background(), cr))
	failed := env.WaitLLSD(t, ns, "uc", llamav1alpha1.PhaseFailed)
	assert.Equal(t, "UserConfigNotFound", condition(failed, status.TypeReconciled).Reason)

	run := configMap(ns, "run", map[string]string{"config.yaml": "version: 2\n"})
	require.NoError(t, k8s.Create(context.Background(), run))
	hash := waitAnnotation(t, ns, "uc", llamastack.AnnotationUserConfigHash, "")
	env.WaitLLSD(t, ns, "uc", llamav1alpha1.PhaseInitializing)

	_, rv, _ := podTemplate(t, ns, "uc")
	require.NoError(t, env.Get(ns, "run", run))
	run.Annotations = map[string]string{"note": "label and annotation edits roll nothing"}
	require.NoError(t, k8s.Update(context.Background(), run))
	time.Sleep(4 * reconcilePeriod)
	_, rvAfter, _ := podTemplate(t, ns, "uc")
	assert.Equal(t, rv, rvAfter)

	require.NoError(t, env.Get(ns, "run", run))
	run.Data["config.yaml"] = "version: 2\nimage_name: starter\n"
	require.NoError(t, k8s.Update(context.Background(), run))
	waitAnnotation(t, ns, "uc", llamastack.AnnotationUserConfigHash, hash)

	require.NoError(t, env.Get(ns, "run", run))
	run.Data = map[string]string{"run.yaml": "version: 2\n"}
	require.NoError(t, k8s.Update(context.Background(), run))
	failed = env.WaitLLSD(t, ns, "uc", llamav1alpha1.PhaseFailed)
	c := condition(failed, status.TypeReconciled)
	assert.Equal(t, "UserConfigInvalid", c.Reason)
	assert.Contains(t, c.Message, "has no key config.yaml (it has: run.yaml)")
}

// Sources that hold no certificate (Open Data Hub's bundle before anything was
// put in it, public roots switched off) mount no empty trust store: an empty
// SSL_CERT_FILE would fail every TLS connection.
func TestEmptyBundleIsNotMounted(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), configMap(ns, "odh-trusted-ca-bundle", map[string]string{"ca-bundle.crt": "", "odh-ca-bundle.crt": "\n"})))
	cr := framework.LLSD(ns, "empty")
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{PublicRoots: ptr.To(false)}
	require.NoError(t, k8s.Create(context.Background(), cr))
	c := waitTrust(t, ns, "empty", "NoCertificates")
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, c.Message, "hold no certificate")
	ann, _, dep := podTemplate(t, ns, "empty")
	assert.Empty(t, ann[llamastack.AnnotationCABundleHash])
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		assert.NotEqual(t, "SSL_CERT_FILE", e.Name, "no trust store is mounted")
	}
	require.NoError(t, env.Gone(ns, "empty-ca-bundle", &corev1.ConfigMap{}))
}

// The bundle ConfigMap is the operator's: an edit of its data by anyone else
// is written back (the operator reads it whole again only when its
// resourceVersion is not the one it wrote), and the pods do not restart.
func TestEditedBundleIsWrittenBack(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "")
	require.NoError(t, k8s.Create(context.Background(), configMap(ns, "my-cas", map[string]string{"ca-bundle.crt": newCA(t, "ca-a")})))
	cr := framework.LLSD(ns, "edited")
	cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "my-cas"}}
	require.NoError(t, k8s.Create(context.Background(), cr))
	waitTrust(t, ns, "edited", "BundleMerged")
	good := bundleOf(t, ns, "edited")
	ann, rv, _ := podTemplate(t, ns, "edited")

	cm := &corev1.ConfigMap{}
	require.NoError(t, env.Get(ns, "edited-ca-bundle", cm))
	cm.Data["ca-bundle.crt"] = newCA(t, "intruder")
	require.NoError(t, k8s.Update(context.Background(), cm))
	env.Eventually(t, "the bundle written back", func() error {
		if got := bundleOf(t, ns, "edited"); got != good {
			return fmt.Errorf("the bundle holds %d bytes, not the %d merged", len(got), len(good))
		}
		return nil
	})
	annAfter, rvAfter, _ := podTemplate(t, ns, "edited")
	assert.Equal(t, rv, rvAfter, "nothing restarts")
	assert.Equal(t, ann[llamastack.AnnotationCABundleHash], annAfter[llamastack.AnnotationCABundleHash])
}
