package trustyai

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// sidecarISVC is an InferenceService of the mode whose sidecar.istio.io/inject
// annotation is inject ("" for none).
func sidecarISVC(name, mode, inject string) *unstructured.Unstructured {
	u := inferenceService(name, mode)
	if inject != "" {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[annotationIstioInject] = inject
		u.SetAnnotations(a)
	}
	return u
}

// Upstream's condition (patchKServe, for the InferenceServices its
// handleInferenceServices configures): a sidecar asked for with exactly
// "true", on an InferenceService that gets the logger.
func TestSidecarClientIsUpstreamsCondition(t *testing.T) {
	for _, c := range []struct {
		mode, inject string
		serverless   bool
		want         bool
	}{
		{"RawDeployment", "true", false, true},
		{"Standard", "true", false, true},
		{"Serverless", "true", true, true},
		{"Knative", "true", true, true},
		{"Serverless", "true", false, false}, // not configured without kServeServerless
		{"ModelMesh", "true", true, false},   // wired through its Deployments
		{"", "true", true, false},
		{"RawDeployment", "", false, false},
		{"RawDeployment", "false", false, false},
		{"RawDeployment", "True", false, false},
		{"RawDeployment", "yes", false, false},
	} {
		assert.Equal(t, c.want, sidecarClient(sidecarISVC("m", c.mode, c.inject), c.serverless), "%+v", c)
	}
}

// The routes need Istio's APIs, KServe's (their clients are
// InferenceServices) and the https port they lead to (a certificate creator).
func TestMeshRoutesNeedIstioKServeAndTLS(t *testing.T) {
	for _, c := range []struct {
		p    platform.Cluster
		want bool
	}{
		{platform.Cluster{Istio: true, KServe: true, CertManager: true}, true},
		{platform.Cluster{Istio: true, KServe: true, OpenShift: true}, true},
		{platform.Cluster{Istio: true, KServe: true}, false},
		{platform.Cluster{Istio: true, CertManager: true}, false},
		{platform.Cluster{KServe: true, OpenShift: true}, false},
	} {
		assert.Equal(t, c.want, meshRoutes(c.p), "%+v", c.p)
	}
	both := release.NewCapabilities(platform.DestinationRule, platform.VirtualService)
	assert.True(t, platform.ClusterOf(both).Istio)
	assert.False(t, platform.ClusterOf(release.NewCapabilities(platform.DestinationRule)).Istio, "both APIs or none")
	assert.False(t, platform.ClusterOf(release.NewCapabilities(platform.VirtualService)).Istio, "both APIs or none")
}

// metadataKind is wiringKind whose APIReader lists InferenceServices as
// metadata (the fake client lists unstructured objects of an unregistered
// kind only as unstructured).
func metadataKind(t *testing.T, objs ...client.Object) *Kind {
	t.Helper()
	k, _, _ := wiringKind(t, objs...)
	inner := k.APIReader
	k.APIReader = readerFunc(func(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
		meta, ok := list.(*metav1.PartialObjectMetadataList)
		require.True(t, ok, "read as metadata")
		full := &unstructured.UnstructuredList{}
		full.SetGroupVersionKind(meta.GroupVersionKind())
		if err := inner.List(ctx, full, opts...); err != nil {
			return err
		}
		for _, u := range full.Items {
			meta.Items = append(meta.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}, ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Annotations: u.GetAnnotations()}})
		}
		return nil
	})
	return k
}

type readerFunc func(context.Context, client.ObjectList, ...client.ListOption) error

func (f readerFunc) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	panic("not used")
}

func (f readerFunc) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return f(ctx, list, opts...)
}

// Gather reads the namespace's InferenceServices for the decision, only
// where the routes can exist.
func TestSidecarClientsReadsTheNamespace(t *testing.T) {
	mesh := platform.Cluster{Istio: true, KServe: true, CertManager: true}
	ctx := context.Background()

	k := metadataKind(t, sidecarISVC("a", "RawDeployment", ""), sidecarISVC("b", "RawDeployment", "true"))
	got, err := k.sidecarClients(ctx, "team-a", mesh, false)
	require.NoError(t, err)
	assert.True(t, got)
	got, err = k.sidecarClients(ctx, "other", mesh, false)
	require.NoError(t, err)
	assert.False(t, got, "another namespace's do not count")

	k = metadataKind(t, sidecarISVC("a", "RawDeployment", "false"), sidecarISVC("s", "Serverless", "true"))
	got, err = k.sidecarClients(ctx, "team-a", mesh, false)
	require.NoError(t, err)
	assert.False(t, got, "a Serverless one is not configured without kServeServerless")
	got, err = k.sidecarClients(ctx, "team-a", mesh, true)
	require.NoError(t, err)
	assert.True(t, got)

	// Without the routes' prerequisites nothing is read (a Kind without a
	// client would panic).
	for _, p := range []platform.Cluster{{KServe: true, CertManager: true}, {Istio: true, KServe: true}} {
		got, err = (&Kind{}).sidecarClients(ctx, "team-a", p, true)
		require.NoError(t, err)
		assert.False(t, got)
	}
}

// With Istio, a sidecar client logs to the service's plain http port (its
// sidecar sends it on over TLS by the routes); the others keep https, and
// without Istio every one does.
func TestSidecarClientsLogThroughTheMesh(t *testing.T) {
	cr := sample(t, nil)
	url := loggerURL(cr, platform.TLSCertManager)
	assert.Equal(t, "http://trustyaiservice-sample.team-a.svc.cluster.local", sidecarLoggerURL(url))
	assert.Equal(t, "http://x", sidecarLoggerURL("http://x"), "already plain http (no TLS)")

	for name, c := range map[string]struct {
		caps release.Capabilities
		want map[string]string
	}{
		"Istio": {release.NewCapabilities(platform.InferenceService, platform.Certificate, platform.DestinationRule, platform.VirtualService),
			map[string]string{"meshed": "http://trustyaiservice-sample.team-a.svc.cluster.local", "plain": url}},
		"no Istio": {release.NewCapabilities(platform.InferenceService, platform.Certificate),
			map[string]string{"meshed": url, "plain": url}},
	} {
		t.Run(name, func(t *testing.T) {
			k, got, _ := wiringKind(t, sidecarISVC("meshed", "Serverless", "true"), sidecarISVC("plain", "RawDeployment", ""))
			caps := c.caps
			k.Capabilities = func() (release.Capabilities, error) { return caps, nil }
			_, err := k.wireInferenceServices(context.Background(), cr, url, true)
			require.NoError(t, err)
			urls := map[string]string{}
			for _, u := range got.objs {
				urls[u.GetName()], _, _ = unstructured.NestedString(u.Object, "spec", "predictor", "logger", "url")
			}
			assert.Equal(t, c.want, urls)
		})
	}
}

// The translation hands the decision and the capability to the chart;
// offline, Istio's and KServe's APIs stand for a sidecar client.
func TestTranslateIstio(t *testing.T) {
	caps := release.NewCapabilities(platform.InferenceService, platform.Certificate, platform.DestinationRule, platform.VirtualService)
	in := inputs(defaults, caps)
	in.values.SidecarClients = true
	v, err := translate(sample(t, nil), in.values)
	require.NoError(t, err)
	assert.True(t, v.Istio.SidecarClients)
	assert.True(t, v.Capabilities.Istio)

	v, err = translate(sample(t, nil), inputs(defaults, release.NewCapabilities(platform.Certificate)).values)
	require.NoError(t, err)
	assert.False(t, v.Istio.SidecarClients)
	assert.False(t, v.Capabilities.Istio)

	k := &Kind{}
	off, err := k.OfflineInputs(sample(t, nil), caps)
	require.NoError(t, err)
	assert.True(t, off.values.SidecarClients)
	for _, c := range []release.Capabilities{
		release.NewCapabilities(platform.Certificate, platform.DestinationRule, platform.VirtualService),
		release.NewCapabilities(platform.InferenceService, platform.DestinationRule, platform.VirtualService),
	} {
		off, err := k.OfflineInputs(sample(t, nil), c)
		require.NoError(t, err)
		assert.False(t, off.values.SidecarClients, "%v", c.APIVersions())
	}
}
