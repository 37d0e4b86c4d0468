package release

import (
	"sync"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// heldPending is a Helm storage driver that keeps a revision's pending
// record in memory instead of writing it: Helm writes every revision twice,
// first pending-install or pending-upgrade and then deployed (or failed);
// this writes it once, when it is deployed or failed. That is one write
// fewer per install and per upgrade.
//
// The pending record is Helm's lock and its trace of an action that died
// midway. Neither is needed here: one leader reconciles, its renew deadline
// ends it before another can take the lease, and one CR reconciles at a
// time. A process killed mid-install leaves objects and no record, and the
// next install adopts them (they carry the release's annotations); one
// killed mid-upgrade leaves the last deployed revision, which the next
// upgrade starts from. Pending records stored by older operators or by Helm
// itself are still handled by the pending-release grace.
//
// A driver serves one action configuration, which serves one reconcile.
type heldPending struct {
	driver.Driver
	mu   sync.Mutex
	held map[string]*release.Release
}

func holdPending(d driver.Driver) *heldPending {
	return &heldPending{Driver: d, held: map[string]*release.Release{}}
}

func (d *heldPending) Create(key string, rls *release.Release) error {
	if rls.Info != nil && rls.Info.Status.IsPending() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.held[key] = rls
		return nil
	}
	return d.Driver.Create(key, rls)
}

func (d *heldPending) Update(key string, rls *release.Release) error {
	d.mu.Lock()
	_, held := d.held[key]
	if held && rls.Info != nil && rls.Info.Status.IsPending() {
		d.held[key] = rls
		d.mu.Unlock()
		return nil
	}
	delete(d.held, key)
	d.mu.Unlock()
	if held {
		return d.Driver.Create(key, rls)
	}
	return d.Driver.Update(key, rls)
}

func (d *heldPending) Get(key string) (*release.Release, error) {
	d.mu.Lock()
	rls, held := d.held[key]
	d.mu.Unlock()
	if held {
		return rls, nil
	}
	return d.Driver.Get(key)
}

func (d *heldPending) Delete(key string) (*release.Release, error) {
	d.mu.Lock()
	rls, held := d.held[key]
	delete(d.held, key)
	d.mu.Unlock()
	if held {
		return rls, nil
	}
	return d.Driver.Delete(key)
}
