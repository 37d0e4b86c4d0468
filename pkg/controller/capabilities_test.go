package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// fakeMapper answers RESTMapping from a set of served kinds, or with an error.
type fakeMapper struct {
	meta.RESTMapper
	served map[string]bool
	err    error
}

func (m *fakeMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if m.err != nil {
		return nil, m.err
	}
	if m.served[gk.String()] {
		return &meta.RESTMapping{}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
}

func TestCapabilitiesKeepTheLastAnswerOnDiscoveryErrors(t *testing.T) {
	m := &fakeMapper{served: map[string]bool{"Route.route.openshift.io": true, "SecurityContextConstraints.security.openshift.io": true}}
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

	// Only NoMatch means absent.
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
	d := newCapabilityDetector(&fakeMapper{served: map[string]bool{"Route.route.openshift.io": true}}, nil, time.Minute)
	caps, err := d.Capabilities()
	require.NoError(t, err)
	assert.True(t, caps.Route)
	assert.False(t, caps.OpenShift)
}
