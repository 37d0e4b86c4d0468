package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The records written with pooled compressors are byte for byte Helm's
// (its timestamp label aside), on create and on update, and Helm's driver
// reads them back.
func TestRecordsAreHelms(t *testing.T) {
	rls := func(st release.Status) *release.Release {
		return &release.Release{
			Name: "r", Namespace: "ns", Version: 2, Info: &release.Info{Status: st, Description: "d"},
			Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("kind: ConfigMap\n")}}},
			Config:   map[string]any{"v": 1},
			Manifest: "---\nkind: ConfigMap\n",
			Labels:   map[string]string{LabelChartDigest: "abc", "owner": "someone", LabelOwnerKind: "K", LabelOwnerNamespace: "ns", LabelOwnerName: "r", LabelOwnerUID: "u"},
		}
	}
	helmCS, oursCS := fake.NewClientset(), fake.NewClientset()
	helm := driver.NewConfigMaps(helmCS.CoreV1().ConfigMaps("ops"))
	ours := newRecords(oursCS.CoreV1().ConfigMaps("ops"), Owner{Kind: "K", Namespace: "ns", Name: "r", UID: "u", Release: "r", Legacy: "r"})
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

	for _, d := range []driver.Driver{helm, ours} {
		require.NoError(t, d.Create("sh.helm.release.v1.r.v2", rls(release.StatusDeployed)))
	}
	same("createdAt")
	assert.ErrorIs(t, ours.Create("sh.helm.release.v1.r.v2", rls(release.StatusDeployed)), driver.ErrReleaseExists)
	for _, d := range []driver.Driver{helm, ours} {
		require.NoError(t, d.Update("sh.helm.release.v1.r.v2", rls(release.StatusSuperseded)))
	}
	same("modifiedAt")

	back, err := driver.NewConfigMaps(oursCS.CoreV1().ConfigMaps("ops")).Get("sh.helm.release.v1.r.v2")
	require.NoError(t, err)
	assert.Equal(t, release.StatusSuperseded, back.Info.Status)
	assert.Equal(t, rls(release.StatusSuperseded).Manifest, back.Manifest)
}
