package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

func TestOpenShiftRouteAndInjectedTrust(t *testing.T) {
	ns := env.NewNamespace(t, "")
	cr := framework.LLSD(ns, "ocp")
	cr.Spec.Network = &llamav1alpha1.NetworkSpec{ExposeRoute: true}
	require.NoError(t, k8s.Create(context.Background(), cr))
	env.WaitLLSD(t, ns, "ocp", llamav1alpha1.PhaseInitializing)
	require.NoError(t, env.Get(ns, "ocp-ingress", &networkingv1.Ingress{}), "before the Route API exists: an Ingress")
	ann, _, _ := podTemplate(t, ns, "ocp")
	assert.Empty(t, ann[llamastack.AnnotationCABundleHash], "no CA source applies off OpenShift")

	installRouteAPI(t)

	// The new API is detected and the release upgraded: a Route replaces the Ingress.
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("route.openshift.io/v1")
	route.SetKind("Route")
	env.Eventually(t, "the Route", func() error { return env.Get(ns, "ocp-route", route) })
	env.Eventually(t, "the Ingress to go", func() error { return env.Gone(ns, "ocp-ingress", &networkingv1.Ingress{}) })
	termination, _, _ := unstructured.NestedString(route.Object, "spec", "tls", "termination")
	assert.Equal(t, "edge", termination)
	insecure, _, _ := unstructured.NestedString(route.Object, "spec", "tls", "insecureEdgeTerminationPolicy")
	assert.Equal(t, "Redirect", insecure)

	// The injection ConfigMaps, never the same one for both injections.
	serviceCA := &corev1.ConfigMap{}
	env.Eventually(t, "the service CA ConfigMap", func() error { return env.Get(ns, "ocp-service-ca", serviceCA) })
	assert.Equal(t, "true", serviceCA.Annotations["service.beta.openshift.io/inject-cabundle"])
	assert.Empty(t, serviceCA.Labels["config.openshift.io/inject-trusted-cabundle"])
	// One upgrade creates both, one after the other.
	trusted := &corev1.ConfigMap{}
	env.Eventually(t, "the trusted CA ConfigMap", func() error { return env.Get(ns, "ocp-trusted-ca", trusted) })
	assert.Equal(t, "true", trusted.Labels["config.openshift.io/inject-trusted-cabundle"])
	assert.Empty(t, trusted.Annotations["service.beta.openshift.io/inject-cabundle"])

	c := waitTrust(t, ns, "ocp", "BundleMerged")
	assert.Contains(t, c.Message, "ConfigMap "+ns+"/ocp-service-ca, ConfigMap "+ns+"/ocp-trusted-ca, public roots")
	hash := waitAnnotation(t, ns, "ocp", llamastack.AnnotationCABundleHash, "")

	// Play the service CA operator: the injected CA joins the bundle, and a
	// later drift repair leaves the injected data alone.
	injected := newCA(t, "openshift-service-serving-signer")
	require.NoError(t, env.Get(ns, "ocp-service-ca", serviceCA))
	serviceCA.Data = map[string]string{"service-ca.crt": injected}
	require.NoError(t, k8s.Update(context.Background(), serviceCA))
	waitAnnotation(t, ns, "ocp", llamastack.AnnotationCABundleHash, hash)
	assert.Contains(t, bundleOf(t, ns, "ocp"), strings.TrimSpace(strings.Split(injected, "\n")[1]))
	time.Sleep(4 * reconcilePeriod)
	require.NoError(t, env.Get(ns, "ocp-service-ca", serviceCA))
	assert.Equal(t, injected, serviceCA.Data["service-ca.crt"], "drift repair must not wipe what the injector wrote")

	// Play the router: the Route's host is the routeURL.
	require.NoError(t, env.Get(ns, "ocp-route", route))
	require.NoError(t, unstructured.SetNestedSlice(route.Object, []any{map[string]any{"host": "llama.apps.example.com"}}, "status", "ingress"))
	require.NoError(t, k8s.Status().Update(context.Background(), route))
	env.Eventually(t, "routeURL", func() error {
		got := &llamav1alpha1.LlamaStackDistribution{}
		if err := env.Get(ns, "ocp", got); err != nil {
			return err
		}
		if got.Status.RouteURL != "https://llama.apps.example.com" {
			return fmt.Errorf("routeURL %q", got.Status.RouteURL)
		}
		return nil
	})

	// Switch the service CA off: its ConfigMap goes.
	patchCR(t, ns, "ocp", func(c *llamav1alpha1.LlamaStackDistribution) {
		c.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{ServiceCA: ptr.To(false)}
	})
	env.Eventually(t, "the service CA ConfigMap to go", func() error { return env.Gone(ns, "ocp-service-ca", &corev1.ConfigMap{}) })
}
