package release

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// counting counts the writes that reach the driver it wraps.
type counting struct {
	driver.Driver
	creates, updates int
}

func (c *counting) Create(key string, rls *release.Release) error {
	c.creates++
	return c.Driver.Create(key, rls)
}

func (c *counting) Update(key string, rls *release.Release) error {
	c.updates++
	return c.Driver.Update(key, rls)
}

func rev(version int, st release.Status) *release.Release {
	return &release.Release{Name: "r", Namespace: "ns", Version: version, Info: &release.Info{Status: st}}
}

// An install writes its record once, deployed; an upgrade writes the new
// revision once and supersedes the old one; a failed action is stored
// failed; a pending revision is readable while held and never written.
func TestPendingRecordsAreHeld(t *testing.T) {
	inner := &counting{Driver: driver.NewMemory()}
	d := holdPending(inner)

	require.NoError(t, d.Create("r.v1", rev(1, release.StatusPendingInstall)))
	got, err := d.Get("r.v1")
	require.NoError(t, err)
	assert.Equal(t, release.StatusPendingInstall, got.Info.Status, "a held revision is readable")
	_, err = inner.Get("r.v1")
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound, "and not written")
	require.NoError(t, d.Update("r.v1", rev(1, release.StatusDeployed)))
	assert.Equal(t, 1, inner.creates+inner.updates, "one write per install")

	require.NoError(t, d.Create("r.v2", rev(2, release.StatusPendingUpgrade)))
	require.NoError(t, d.Update("r.v1", rev(1, release.StatusSuperseded)))
	require.NoError(t, d.Update("r.v2", rev(2, release.StatusDeployed)))
	assert.Equal(t, 3, inner.creates+inner.updates, "two per upgrade: the new revision and the old one superseded")
	assert.Equal(t, 2, inner.creates)

	require.NoError(t, d.Create("r.v3", rev(3, release.StatusPendingUpgrade)))
	require.NoError(t, d.Update("r.v3", rev(3, release.StatusFailed)))
	got, err = inner.Get("r.v3")
	require.NoError(t, err)
	assert.Equal(t, release.StatusFailed, got.Info.Status, "a failed action is stored")

	require.NoError(t, d.Create("r.v4", rev(4, release.StatusPendingUpgrade)))
	gone, err := d.Delete("r.v4")
	require.NoError(t, err)
	assert.Equal(t, 4, gone.Version)
	_, err = d.Get("r.v4")
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound)
}
