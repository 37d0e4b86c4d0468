package release

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// allReads counts every read.
type allReads struct {
	client.Reader
	n int
}

func (r *allReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// notCovered is a cache that cannot tell: it covers no namespace.
type notCovered struct{ client.Reader }

func (notCovered) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New(`unable to get: ns because of unknown namespace for the cache`)
}

// Optional ConfigMaps the cache of ConfigMap metadata does not hold are not
// asked for; those it holds, the ones the operator wrote, and all of them when
// the cache cannot tell, are.
func TestOptionalConfigMapsTheCacheLacksAreNotRead(t *testing.T) {
	ctx := context.Background()
	api := fake.NewClientBuilder().Build()
	reads := &allReads{Reader: api}
	cache := fake.NewClientBuilder().Build() // what the watch has seen
	owner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr", UID: "uid-1"}}
	d := Deps{Client: api, APIReader: reads, OperatorNamespace: "op", SettingsConfigMap: "settings", ConfigMapMetadata: cache, Bundles: &cabundle.Cache{}}
	b := d.Bundle(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	b.Recorder = record.NewFakeRecorder(10)
	odh := trust.Request{Namespace: "ns"}

	settings, err := d.SettingsData(ctx)
	require.NoError(t, err)
	assert.Nil(t, settings)
	stored, _, err := b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	assert.Nil(t, stored)
	_, err = b.Resolve(ctx, odh)
	require.NoError(t, err)
	assert.Zero(t, reads.n, "absent from the cache: not asked")
	out, err := b.Resolve(ctx, trust.Request{Namespace: "ns", Explicit: &trust.Reference{Field: "spec.caBundle", Name: trust.ODHBundle}})
	require.NoError(t, err)
	assert.Equal(t, trust.ReasonConfigMapNotFound, out.Reason, "a bundle the CR names is missing")
	assert.Equal(t, 1, reads.n, "and that the API server confirms")
	reads.n = 0

	// The watch saw them: they are read, with their data, from the API server.
	for _, c := range []client.Client{api, cache} {
		require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "op", Name: "settings"}, Data: map[string]string{"k": "v"}}))
		require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: trust.ODHBundle}, Data: map[string]string{"ca-bundle.crt": ""}}))
	}
	settings, err = d.SettingsData(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, settings)
	_, err = b.Resolve(ctx, odh)
	require.NoError(t, err)
	assert.Equal(t, 2, reads.n)

	// A bundle the operator wrote is read even before the cache has it.
	require.NoError(t, b.Write(ctx, owner, "cr-ca-bundle", nil, trust.Outcome{Wanted: true, Sources: []string{"s"}, Bundle: &trust.Bundle{PEM: []byte("pem"), Certificates: 1}}, nil))
	stored, _, err = b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	assert.NotNil(t, stored)

	// A cache that cannot tell: the API server is asked.
	d.ConfigMapMetadata, d.SettingsConfigMap = notCovered{}, "other-settings"
	before := reads.n
	_, err = d.SettingsData(ctx)
	require.NoError(t, err)
	assert.Equal(t, before+1, reads.n)
}
