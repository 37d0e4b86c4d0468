package release

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeDiscovery answers ServerResourcesForGroupVersion from a set of served
// kinds ("Kind.group"), or with an error.
type fakeDiscovery struct {
	served map[string]bool
	err    error
}

func (f *fakeDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if f.err != nil {
		return nil, f.err
	}
	parsed, _ := schema.ParseGroupVersion(gv)
	list := &metav1.APIResourceList{GroupVersion: gv}
	for k := range f.served {
		gk := schema.ParseGroupKind(k)
		if gk.Group == parsed.Group {
			list.APIResources = append(list.APIResources, metav1.APIResource{Kind: gk.Kind})
		}
	}
	if len(list.APIResources) == 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: parsed.Group}, "")
	}
	return list, nil
}

var (
	routeGVK   = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}
	monitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	sccGVK     = schema.GroupVersionKind{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints"}
)

func TestCapabilitiesKeepTheLastAnswerOnDiscoveryErrors(t *testing.T) {
	m := &fakeDiscovery{served: map[string]bool{"Route.route.openshift.io": true, "SecurityContextConstraints.security.openshift.io": true}}
	now := time.Unix(0, 0)
	d := NewCapabilityDetector(m, nil, time.Minute, []Meta{testKind(routeGVK, monitorGVK).Meta(), testKind(sccGVK, routeGVK).Meta()})
	d.now = func() time.Time { return now }

	// No answer yet: the error is returned (the reconcile fails, nothing is upgraded).
	m.err = errors.New("connection refused")
	_, err := d.Capabilities()
	require.Error(t, err)

	m.err = nil
	caps, err := d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, NewCapabilities(routeGVK, sccGVK).APIVersions(), caps.APIVersions())
	assert.True(t, caps.Has(routeGVK))
	assert.False(t, caps.Has(monitorGVK))

	// Discovery breaks after the TTL: the last answer holds (no Route -> Ingress switch).
	now = now.Add(2 * time.Minute)
	m.err = errors.New("the server is currently unable to handle the request")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.True(t, caps.Has(routeGVK))
	assert.True(t, caps.Has(sccGVK))

	// Only "not served" means absent: a removed API is noticed.
	m.err = nil
	delete(m.served, "Route.route.openshift.io")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.False(t, caps.Has(routeGVK))
	assert.True(t, caps.Has(sccGVK))

	// Within the TTL nothing is asked.
	m.err = errors.New("must not be called")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, []string{"security.openshift.io/v1", "security.openshift.io/v1/SecurityContextConstraints"}, caps.APIVersions())
}

// Only the kinds' optional APIs are asked about, each once.
func TestDetectorAsksOnlyForTheKindsOptionalAPIs(t *testing.T) {
	asked := map[string]int{}
	d := NewCapabilityDetector(recordingLister(asked), nil, time.Minute, []Meta{testKind(routeGVK, monitorGVK).Meta(), testKind(routeGVK).Meta()})
	_, err := d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"route.openshift.io/v1": 1, "monitoring.coreos.com/v1": 1}, asked)
}

func TestCapabilitiesFromAPIVersions(t *testing.T) {
	opt := []schema.GroupVersionKind{routeGVK, monitorGVK, sccGVK}
	c := CapabilitiesFromAPIVersions([]string{"route.openshift.io/v1", "monitoring.coreos.com/v1/ServiceMonitor", "example.com/v1"}, opt)
	assert.True(t, c.Has(routeGVK))
	assert.True(t, c.Has(monitorGVK))
	assert.False(t, c.Has(sccGVK))
	assert.False(t, CapabilitiesFromAPIVersions(nil, opt).Has(routeGVK))
}

type recordingLister map[string]int

func (r recordingLister) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	r[gv]++
	return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
}
