package helm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// calls counts the requests of a fake clientset by verb.
func calls(cs *fake.Clientset) map[string]int {
	n := map[string]int{}
	cs.PrependReactor("*", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n[a.GetVerb()]++
		return false, nil, nil
	})
	return n
}

var storeOwner = Owner{Kind: "K", Namespace: "ns", Name: "r", UID: "u", Release: "r", Legacy: "r"}

func rev(version int, st rcommon.Status) *helmrelease.Release {
	return &helmrelease.Release{Name: "r", Namespace: "ns", Version: version, Info: &helmrelease.Info{Status: st}, Labels: storeOwner.Labels()}
}

// A reconcile's store lists a release's records once and answers the rest
// from what it listed and wrote; what it stores is what Helm stores (history
// pruned to the maximum, never the deployed revision, which Helm's own
// driver reads back).
func TestAStoreListsAReleaseOnce(t *testing.T) {
	cs := fake.NewClientset()
	n := calls(cs)
	s := NewStore(NewRecords(cs.CoreV1().ConfigMaps("ops"), storeOwner))

	_, err := s.Last("r")
	assert.ErrorIs(t, err, ErrReleaseNotFound)
	require.NoError(t, s.Create(rev(1, rcommon.StatusDeployed), 3))
	for v := 2; v <= 5; v++ {
		last, err := s.Last("r")
		require.NoError(t, err)
		require.NoError(t, s.Create(rev(v, rcommon.StatusDeployed), 3))
		last.Info.Status = rcommon.StatusSuperseded
		require.NoError(t, s.Update(last))
	}
	assert.Equal(t, 1, n["list"], "one list for the whole history")
	assert.Equal(t, 5, n["create"])
	assert.Equal(t, 4, n["update"])
	d, err := s.Deployed("r")
	require.NoError(t, err)
	assert.Equal(t, 5, d.Version)

	stored, err := driver.NewConfigMaps(cs.CoreV1().ConfigMaps("ops")).Query(map[string]string{"name": "r", "owner": "helm"})
	require.NoError(t, err)
	got := map[int]rcommon.Status{}
	for _, r := range stored {
		rel := r.(*helmrelease.Release)
		got[rel.Version] = rel.Info.Status
	}
	assert.Equal(t, map[int]rcommon.Status{3: rcommon.StatusSuperseded, 4: rcommon.StatusSuperseded, 5: rcommon.StatusDeployed}, got,
		"pruned to three revisions, the last deployed, as Helm's driver reads them")
}

// A store lists again after a failed write, and prunes around the deployed
// revision.
func TestAStoreForgetsWhatAFailedWriteLeavesUnknown(t *testing.T) {
	cs := fake.NewClientset()
	n := calls(cs)
	s := NewStore(NewRecords(cs.CoreV1().ConfigMaps("ops"), storeOwner))
	require.NoError(t, s.Create(rev(1, rcommon.StatusDeployed), 0))
	require.NoError(t, s.Create(rev(2, rcommon.StatusFailed), 0))
	require.NoError(t, s.Create(rev(3, rcommon.StatusFailed), 2))
	h, err := s.History("r")
	require.NoError(t, err)
	var versions []int
	for _, r := range h {
		versions = append(versions, r.Version)
	}
	assert.Equal(t, []int{1, 3}, versions, "the deployed revision is kept, the oldest other one goes")

	assert.Error(t, s.Update(rev(9, rcommon.StatusDeployed)), "no such record")
	before := n["list"]
	_, err = s.History("r")
	require.NoError(t, err)
	assert.Equal(t, before+1, n["list"], "listed again after a failed write")

	cs.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("refused")
	})
	assert.Error(t, s.Create(rev(4, rcommon.StatusDeployed), 0))
}
