package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
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

func TestCapabilitiesKeepTheLastAnswerOnDiscoveryErrors(t *testing.T) {
	m := &fakeDiscovery{served: map[string]bool{"Route.route.openshift.io": true, "SecurityContextConstraints.security.openshift.io": true}}
	now := time.Unix(0, 0)
	d := newCapabilityDetector(m, nil, time.Minute)
	d.now = func() time.Time { return now }

	// No answer yet: the error is returned (the reconcile fails, nothing is upgraded).
	m.err = errors.New("connection refused")
	_, err := d.Capabilities()
	require.Error(t, err)

	m.err = nil
	caps, err := d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, values.Capabilities{Route: true, OpenShift: true}, caps)

	// Discovery breaks after the TTL: the last answer holds (no Route -> Ingress switch).
	now = now.Add(2 * time.Minute)
	m.err = errors.New("the server is currently unable to handle the request")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, values.Capabilities{Route: true, OpenShift: true}, caps)

	// Only "not served" means absent: a removed API is noticed.
	m.err = nil
	delete(m.served, "Route.route.openshift.io")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, values.Capabilities{OpenShift: true}, caps)

	// Within the TTL nothing is asked.
	m.err = errors.New("must not be called")
	caps, err = d.Capabilities()
	require.NoError(t, err)
	assert.Equal(t, values.Capabilities{OpenShift: true}, caps)
}

// OpenShift is the SCC API, not the Route API (which any cluster can install).
func TestOpenShiftIsDetectedBySCC(t *testing.T) {
	d := newCapabilityDetector(&fakeDiscovery{served: map[string]bool{"Route.route.openshift.io": true}}, nil, time.Minute)
	caps, err := d.Capabilities()
	require.NoError(t, err)
	assert.True(t, caps.Route)
	assert.False(t, caps.OpenShift)
}
