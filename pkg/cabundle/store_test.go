package cabundle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// fullReads counts the reads of whole ConfigMaps (not their metadata).
type fullReads struct {
	client.Reader
	n int
}

func (r *fullReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.ConfigMap); ok {
		r.n++
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// A bundle the operator wrote is read as metadata while its resourceVersion
// is the one written; an edit by anyone else is read whole, found different,
// and written back. Without the memory every read is whole.
func TestStoredBundleReadsDataOnlyWhenChanged(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	reads := &fullReads{Reader: c}
	owner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr", UID: "uid-1"}}
	b := Store{Client: c, Reader: reads, Recorder: record.NewFakeRecorder(10), Owner: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Cache: &Cache{}, ManagedLabel: "managed"}
	outcome := func(pem string) trust.Outcome {
		return trust.Outcome{Wanted: true, Sources: []string{"s"}, Bundle: &trust.Bundle{PEM: []byte(pem), Certificates: 1}}
	}

	stored, conflict, err := b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	require.Nil(t, conflict)
	require.Nil(t, stored)
	require.NoError(t, b.Write(ctx, owner, "cr-ca-bundle", nil, outcome("one"), nil))

	stored, _, err = b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	require.NotNil(t, stored)
	assert.Equal(t, outcome("one").MountHash(), stored.Hash)
	assert.Zero(t, reads.n, "the operator's own version is read as metadata")
	require.NoError(t, b.Write(ctx, owner, "cr-ca-bundle", nil, outcome("one"), stored))

	// Someone else's edit.
	cm := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cr-ca-bundle"}, cm))
	cm.Data[trust.BundleKey] = "tampered"
	require.NoError(t, c.Update(ctx, cm))
	stored, _, err = b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	assert.Equal(t, 1, reads.n, "an edited version is read whole")
	assert.Equal(t, trust.ContentHash(map[string]string{trust.BundleKey: "tampered"}, nil), stored.Hash)
	require.NoError(t, b.Write(ctx, owner, "cr-ca-bundle", nil, outcome("one"), stored))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cr-ca-bundle"}, cm))
	assert.Equal(t, "one", cm.Data[trust.BundleKey], "the edit is written back")

	// A process without the memory reads whole every time.
	b.Cache = nil
	_, _, err = b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	_, _, err = b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	assert.Equal(t, 3, reads.n)
}

// The upstream operator's bundle ConfigMap of the same name for this very CR
// (its controller reference is the CR, by UID) is taken over by the next
// write; one of that name controlled by another UID (an earlier CR, or a
// user's without a reference) stays a conflict.
func TestUpstreamBundleOfTheCRIsTakenOver(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr", UID: "uid-1"}}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	upstream := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr-ca-bundle",
		Labels:          map[string]string{"app.kubernetes.io/managed-by": "llama-stack-operator"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)}}, Data: map[string]string{"ca-bundle.crt": "upstream's"}}
	c := fake.NewClientBuilder().WithObjects(upstream).Build()
	b := Store{Client: c, Reader: c, Recorder: record.NewFakeRecorder(10), Owner: gvk, ManagedLabel: "managed"}
	stored, conflict, err := b.Stored(ctx, owner, "cr-ca-bundle")
	require.NoError(t, err)
	require.Nil(t, conflict, "the CR's own bundle is no conflict")
	require.NotNil(t, stored)
	require.NoError(t, b.Write(ctx, owner, "cr-ca-bundle", nil, trust.Outcome{Wanted: true, Sources: []string{"s"}, Bundle: &trust.Bundle{PEM: []byte("one"), Certificates: 1}}, stored))
	cm := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(upstream), cm))
	assert.Equal(t, "true", cm.Labels["managed"], "the operator's now")
	assert.Equal(t, "one", cm.Data[trust.BundleKey])

	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr", UID: "uid-2"}}
	c2 := fake.NewClientBuilder().WithObjects(upstream.DeepCopy()).Build()
	b.Client, b.Reader = c2, c2
	_, conflict, err = b.Stored(ctx, other, "cr-ca-bundle")
	require.NoError(t, err)
	assert.NotNil(t, conflict, "controlled by another UID: a conflict")
}

// Gather reads what is stored, merges the kind's request and refuses a name
// taken by someone else's ConfigMap: nothing mounted, a NameConflict.
func TestGatherRefusesATakenName(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	owner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr", UID: "uid-1"}}
	b := Store{Client: c, Reader: c, Recorder: record.NewFakeRecorder(10), Owner: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Cache: &Cache{}, ManagedLabel: "managed"}
	request := func(stored *Stored, conflict error) trust.Request {
		return trust.Request{Namespace: "ns", Injected: []string{"service-ca"}, PublicRoots: true, Conflict: conflict}
	}

	g, err := b.Gather(ctx, owner, "cr-ca-bundle", request)
	require.NoError(t, err)
	assert.Nil(t, g.Conflict)
	assert.Nil(t, g.Stored)
	assert.NotEmpty(t, g.MountHash, "the public roots are merged with the (empty) injected source and mounted")
	assert.Equal(t, g.Outcome.MountHash(), g.MountHash)

	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cr-ca-bundle"}}))
	g, err = b.Gather(ctx, owner, "cr-ca-bundle", request)
	require.NoError(t, err)
	require.NotNil(t, g.Conflict, "a ConfigMap the operator did not write holds the name")
	assert.Equal(t, status.ReasonNameConflict, g.Conflict.Reason)
	assert.Equal(t, g.Outcome.Message, g.Conflict.Message)
	assert.Empty(t, g.MountHash, "nothing is mounted")
}
