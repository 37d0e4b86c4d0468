package release

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
)

// ValuesOf passes the translation's error on, and converts its values.
func TestValuesOf(t *testing.T) {
	type values struct {
		Name string `json:"name"`
	}
	_, err := ValuesOf(&values{}, errors.New("bad spec"))
	assert.EqualError(t, err, "bad spec")
	v, err := ValuesOf(&values{Name: "x"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "x"}, v)
}

// What the release does not render is not read: nil, and no read (the
// Deps have no client to read with).
func TestNothingRenderedIsNotRead(t *testing.T) {
	obs := Observation{Objects: []ObjectRef{{Kind: "Service", Name: "s"}}}
	d, err := Rendered(context.Background(), Deps{}, "ns", obs, "Deployment", &appsv1.Deployment{})
	require.NoError(t, err)
	assert.Nil(t, d)
	url, err := ExternalURL(context.Background(), Deps{}, "ns", obs)
	require.NoError(t, err)
	assert.Empty(t, url, "neither a Route nor an Ingress is rendered")
}
