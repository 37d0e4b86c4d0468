package helm

import (
	"context"
	crand "crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
)

// The records written with pooled compressors are byte for byte Helm's
// (its timestamp label aside), on create and on update, and Helm's driver
// reads them back.
func TestRecordsAreHelms(t *testing.T) {
	rls := func(st rcommon.Status) *helmrelease.Release {
		return &helmrelease.Release{
			Name: "r", Namespace: "ns", Version: 2, Info: &helmrelease.Info{Status: st, Description: "d"},
			Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}, Templates: []*common.File{{Name: "templates/a.yaml", Data: []byte("kind: ConfigMap\n")}}},
			Config:   map[string]any{"v": 1},
			Manifest: "---\nkind: ConfigMap\n",
			Labels:   map[string]string{"ai-stack-operator.io/chart-digest": "abc", "owner": "someone", LabelOwnerKind: "K", LabelOwnerNamespace: "ns", LabelOwnerName: "r", LabelOwnerUID: "u"},
		}
	}
	helmCS, oursCS := fake.NewClientset(), fake.NewClientset()
	helm := driver.NewConfigMaps(helmCS.CoreV1().ConfigMaps("ops"))
	ours := NewRecords(oursCS.CoreV1().ConfigMaps("ops"), Owner{Kind: "K", Namespace: "ns", Name: "r", UID: "u", Release: "r", Legacy: "r"})
	same := func(stamp string) {
		t.Helper()
		want, err := helmCS.CoreV1().ConfigMaps("ops").Get(context.Background(), "sh.helm.release.v1.r.v2", metav1.GetOptions{})
		require.NoError(t, err)
		got, err := oursCS.CoreV1().ConfigMaps("ops").Get(context.Background(), "sh.helm.release.v1.r.v2", metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotEmpty(t, got.Labels[stamp])
		want.Labels[stamp], got.Labels[stamp] = "", ""
		assert.Equal(t, want.Labels, got.Labels)
		assert.Equal(t, want.Data, got.Data, "the same bytes")
	}

	require.NoError(t, helm.Create("sh.helm.release.v1.r.v2", rls(rcommon.StatusDeployed)))
	require.NoError(t, ours.Create("sh.helm.release.v1.r.v2", rls(rcommon.StatusDeployed)))
	same("createdAt")
	assert.ErrorIs(t, ours.Create("sh.helm.release.v1.r.v2", rls(rcommon.StatusDeployed)), ErrReleaseExists)
	require.NoError(t, helm.Update("sh.helm.release.v1.r.v2", rls(rcommon.StatusSuperseded)))
	require.NoError(t, ours.Update("sh.helm.release.v1.r.v2", rls(rcommon.StatusSuperseded)))
	same("modifiedAt")

	got, err := driver.NewConfigMaps(oursCS.CoreV1().ConfigMaps("ops")).Get("sh.helm.release.v1.r.v2")
	require.NoError(t, err)
	back, ok := got.(*helmrelease.Release)
	require.True(t, ok, "Helm 4's driver reads a %T", got)
	assert.Equal(t, rcommon.StatusSuperseded, back.Info.Status)
	assert.Equal(t, rls(rcommon.StatusSuperseded).Manifest, back.Manifest)
}

// The storage of one CR serves its own records only: another CR's record
// under the same name is not found, not listed and not deleted; an
// unlabelled or oversized write is refused; the records an earlier version
// stored under the CR's legacy name, with its UID, move to its name once.
func TestRecordsAreTheOwnersOnly(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	cms := cs.CoreV1().ConfigMaps("ops")
	long := "a-long-name-that-does-not-fit-in-a-release-name-at-all"
	me := Owner{Kind: "K", Namespace: "ns", Name: long, UID: "uid-me", Release: naming.ReleaseName("k", "ns", long), Legacy: naming.LegacyReleaseName("k", "ns", long)}
	require.NotEqual(t, me.Release, me.Legacy)
	ours := NewRecords(cms, me)
	rls := func(name string, version int, owner Owner) *helmrelease.Release {
		return &helmrelease.Release{Name: name, Namespace: "ns", Version: version, Info: &helmrelease.Info{Status: rcommon.StatusDeployed}, Labels: owner.Labels()}
	}

	// Another CR's record under this CR's name (another namespace).
	other := me
	other.Namespace, other.UID = "elsewhere", "uid-other"
	require.NoError(t, NewRecords(cms, other).Create(recordKey(me.Release, 1), rls(me.Release, 1, other)))
	_, err := ours.Get(recordKey(me.Release, 1))
	assert.ErrorIs(t, err, ErrReleaseNotFound)
	_, err = ours.Query(map[string]string{"name": me.Release, "owner": "helm"})
	assert.ErrorIs(t, err, ErrReleaseNotFound)
	_, err = ours.Delete(recordKey(me.Release, 1))
	assert.ErrorIs(t, err, ErrReleaseNotFound)
	_, err = cms.Get(ctx, recordKey(me.Release, 1), metav1.GetOptions{})
	require.NoError(t, err, "another CR's record is never deleted")
	require.NoError(t, cms.Delete(ctx, recordKey(me.Release, 1), metav1.DeleteOptions{}))

	// Writes without the CR's labels, or too large to store, are refused.
	assert.Error(t, ours.Create(recordKey(me.Release, 1), rls(me.Release, 1, other)))
	big := rls(me.Release, 1, me)
	noise := make([]byte, MaxRecordBytes)
	_, _ = crand.Read(noise)
	big.Manifest = string(noise)
	assert.ErrorIs(t, ours.Create(recordKey(me.Release, 1), big), ErrRecordTooLarge)

	// Legacy records: the CR's (its UID) move; an earlier CR's stay.
	legacy := func(version int, uid types.UID) {
		o := me
		o.UID = uid
		r := rls(me.Legacy, version, o)
		delete(r.Labels, LabelOwnerName) // earlier versions had no name label
		obj, err := recordObject(recordKey(me.Legacy, version), r, "createdAt")
		require.NoError(t, err)
		_, err = cms.Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	legacy(1, "uid-me")
	legacy(2, "uid-me")
	legacy(3, "uid-dead")
	got, err := ours.Query(map[string]string{"name": me.Release, "owner": "helm"})
	require.NoError(t, err)
	assert.Len(t, got, 2)
	for _, r := range got {
		assert.Equal(t, me.Release, r.Name)
		assert.False(t, me.Current(r.Labels), "a moved record is upgraded (it lacks the name label)")
	}
	for v, want := range map[int]bool{1: false, 2: false, 3: true} {
		_, err := cms.Get(ctx, recordKey(me.Legacy, v), metav1.GetOptions{})
		assert.Equal(t, want, err == nil, "legacy revision %d", v)
	}
	back, err := ours.Get(recordKey(me.Release, 2))
	require.NoError(t, err)
	assert.Equal(t, 2, back.Version)
}
