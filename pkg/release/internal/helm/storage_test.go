package helm

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// counting counts the writes that reach the driver it wraps.
type counting struct {
	driver.Driver
	creates, updates int
}

func (c *counting) Create(key string, rls *helmrelease.Release) error {
	c.creates++
	return c.Driver.Create(key, rls)
}

func (c *counting) Update(key string, rls *helmrelease.Release) error {
	c.updates++
	return c.Driver.Update(key, rls)
}

func rev(version int, st helmrelease.Status) *helmrelease.Release {
	return &helmrelease.Release{Name: "r", Namespace: "ns", Version: version, Info: &helmrelease.Info{Status: st}}
}

// An install writes its record once, deployed; an upgrade writes the new
// revision once and supersedes the old one; a failed action is stored
// failed; a pending revision is readable while held and never written.
func TestPendingRecordsAreHeld(t *testing.T) {
	inner := &counting{Driver: driver.NewMemory()}
	d := HoldPending(inner)

	require.NoError(t, d.Create("r.v1", rev(1, helmrelease.StatusPendingInstall)))
	got, err := d.Get("r.v1")
	require.NoError(t, err)
	assert.Equal(t, helmrelease.StatusPendingInstall, got.Info.Status, "a held revision is readable")
	_, err = inner.Get("r.v1")
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound, "and not written")
	require.NoError(t, d.Update("r.v1", rev(1, helmrelease.StatusDeployed)))
	assert.Equal(t, 1, inner.creates+inner.updates, "one write per install")

	require.NoError(t, d.Create("r.v2", rev(2, helmrelease.StatusPendingUpgrade)))
	require.NoError(t, d.Update("r.v1", rev(1, helmrelease.StatusSuperseded)))
	require.NoError(t, d.Update("r.v2", rev(2, helmrelease.StatusDeployed)))
	assert.Equal(t, 3, inner.creates+inner.updates, "two per upgrade: the new revision and the old one superseded")
	assert.Equal(t, 2, inner.creates)

	require.NoError(t, d.Create("r.v3", rev(3, helmrelease.StatusPendingUpgrade)))
	require.NoError(t, d.Update("r.v3", rev(3, helmrelease.StatusFailed)))
	got, err = inner.Get("r.v3")
	require.NoError(t, err)
	assert.Equal(t, helmrelease.StatusFailed, got.Info.Status, "a failed action is stored")

	require.NoError(t, d.Create("r.v4", rev(4, helmrelease.StatusPendingUpgrade)))
	gone, err := d.Delete("r.v4")
	require.NoError(t, err)
	assert.Equal(t, 4, gone.Version)
	_, err = d.Get("r.v4")
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound)
}

// queries counts the queries that reach the driver it wraps.
type queries struct {
	driver.Driver
	n int
}

func (q *queries) Query(labels map[string]string) ([]*helmrelease.Release, error) {
	q.n++
	return q.Driver.Query(labels)
}

// Helm's own install and upgrades, run as a reconcile runs them (a Get
// first, each action with a driver of its own): each lists the release's
// records once, and what is stored is exactly what Helm stores without the
// memory (history pruned to MaxHistory, one revision deployed, the rest
// superseded).
func TestAReconcileListsAReleaseOnce(t *testing.T) {
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "c", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: {{ .Values.v | quote }}\n")}},
	}
	inner := driver.NewMemory()
	reconcile := func(v int) int {
		q := &queries{Driver: inner}
		cfg := &action.Configuration{
			Releases:     storage.Init(HoldPending(q)),
			KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
			Capabilities: chartutil.DefaultCapabilities,
			Log:          func(string, ...any) {},
		}
		vals := map[string]any{"v": v}
		if _, err := action.NewGet(cfg).Run("r"); errors.Is(err, driver.ErrReleaseNotFound) {
			in := action.NewInstall(cfg)
			in.ReleaseName, in.Namespace = "r", "ns"
			_, err := in.Run(ch, vals)
			require.NoError(t, err)
		} else {
			require.NoError(t, err)
			up := action.NewUpgrade(cfg)
			up.Namespace, up.MaxHistory = "ns", 3
			_, err := up.Run("r", ch, vals)
			require.NoError(t, err)
		}
		return q.n
	}
	assert.Equal(t, 1, reconcile(0), "an install lists once")
	for v := 1; v <= 4; v++ {
		assert.Equal(t, 1, reconcile(v), "upgrade %d lists once", v)
	}

	stored, err := inner.Query(map[string]string{"name": "r", "owner": "helm"})
	require.NoError(t, err)
	got := map[int]helmrelease.Status{}
	for _, rls := range stored {
		got[rls.Version] = rls.Info.Status
	}
	assert.Equal(t, map[int]helmrelease.Status{3: helmrelease.StatusSuperseded, 4: helmrelease.StatusSuperseded, 5: helmrelease.StatusDeployed}, got,
		"pruned to three revisions, the last deployed")
}

// A remembered history follows the driver's writes, answers the deployed
// query from itself, and is forgotten when a write fails.
func TestRememberedHistoryFollowsWrites(t *testing.T) {
	q := &queries{Driver: driver.NewMemory()}
	d := HoldPending(q)
	history := map[string]string{"name": "r", "owner": "helm"}
	deployed := map[string]string{"name": "r", "owner": "helm", "status": "deployed"}

	_, err := d.Query(history)
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound, "no records yet")
	require.NoError(t, d.Create("r.v1", rev(1, helmrelease.StatusDeployed)))
	require.NoError(t, d.Create("r.v2", rev(2, helmrelease.StatusPendingUpgrade)))
	h, err := d.Query(history)
	require.NoError(t, err)
	assert.Len(t, h, 1, "a held revision is not stored, so not listed")
	require.NoError(t, d.Update("r.v1", rev(1, helmrelease.StatusSuperseded)))
	require.NoError(t, d.Update("r.v2", rev(2, helmrelease.StatusDeployed)))
	dep, err := d.Query(deployed)
	require.NoError(t, err)
	require.Len(t, dep, 1)
	assert.Equal(t, 2, dep[0].Version)
	_, err = d.Delete("r.v1")
	require.NoError(t, err)
	h, err = d.Query(history)
	require.NoError(t, err)
	require.Len(t, h, 1)
	assert.Equal(t, 2, h[0].Version)
	assert.Equal(t, 1, q.n, "one list for all of it")

	// An update of a record that is not stored fails: the next query lists.
	assert.Error(t, d.Update("r.v9", rev(9, helmrelease.StatusDeployed)))
	_, err = d.Query(history)
	require.NoError(t, err)
	assert.Equal(t, 2, q.n, "listed again after a failed write")

	// Other queries are not remembered.
	_, _ = d.Query(map[string]string{"owner": "helm"})
	_, _ = d.Query(map[string]string{"owner": "helm"})
	assert.Equal(t, 4, q.n)
}

// failing refuses every write.
type failing struct{ driver.Driver }

func (failing) Create(string, *helmrelease.Release) error { return errors.New("refused") }
func (failing) Update(string, *helmrelease.Release) error { return errors.New("refused") }

// Helm logs a failed write of the record that ends an install and reports
// success; the driver remembers it for the reconciler (Reconciler.recorded),
// so that objects applied without a record are a failure.
func TestAFailedRecordWriteIsRemembered(t *testing.T) {
	d := HoldPending(failing{driver.NewMemory()})
	require.NoError(t, d.WriteFailure())
	require.NoError(t, d.Create("r.v1", rev(1, helmrelease.StatusPendingInstall)), "a pending revision is held, not written")
	require.NoError(t, d.WriteFailure())
	require.Error(t, d.Update("r.v1", rev(1, helmrelease.StatusDeployed)))
	err := d.WriteFailure()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "store release r revision 1")
}
