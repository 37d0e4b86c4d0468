package helm

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// HeldPending is a Helm storage driver that keeps a revision's pending
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
// It also remembers a release's history once read: Helm lists every
// record of a release up to four times in one upgrade (the reconciler's
// Get, then Upgrade's Last, and History and Deployed when it prunes), three
// times in one install, each list carrying every stored revision with its
// chart. Within one reconcile nothing but this driver writes the release's
// records (the same reasons as above), so the first list stands, kept
// current with the driver's own writes, and the later ones are answered
// from it. A write that fails forgets it.
//
// A driver serves one action configuration, which serves one reconcile.
type HeldPending struct {
	driver.Driver
	mu   sync.Mutex
	held map[string]*helmrelease.Release
	// history is each release's stored revisions by name, once listed.
	history map[string][]*helmrelease.Release
	// failed is the first write that failed. Helm logs a failed write of
	// the record that ends an install or an upgrade and reports success:
	// the reconciler asks (WriteFailure), so that objects applied without a
	// record are a failure, not a release that seems to be there.
	failed error
}

// WriteFailure is the first write of a record that failed, if any.
func (d *HeldPending) WriteFailure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
}

func HoldPending(d driver.Driver) *HeldPending {
	return &HeldPending{Driver: d, held: map[string]*helmrelease.Release{}, history: map[string][]*helmrelease.Release{}}
}

// Query answers a release's history, and its deployed revisions, from the
// first list of it; other queries go to the driver.
func (d *HeldPending) Query(labels map[string]string) ([]*helmrelease.Release, error) {
	name, status, ok := historyQuery(labels)
	if !ok {
		return d.Driver.Query(labels)
	}
	d.mu.Lock()
	h, known := d.history[name]
	d.mu.Unlock()
	if !known {
		listed, err := d.Driver.Query(map[string]string{"name": name, "owner": "helm"})
		switch {
		case errors.Is(err, driver.ErrReleaseNotFound):
		case err != nil:
			return nil, err
		}
		h = listed
		d.mu.Lock()
		d.history[name] = h
		d.mu.Unlock()
	}
	var out []*helmrelease.Release
	for _, rls := range h {
		if status == "" || (rls.Info != nil && rls.Info.Status.String() == status) {
			out = append(out, rls)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

// historyQuery recognises the two queries Helm's storage makes of one
// release: its history (name and owner) and its deployed revisions (name,
// owner and status deployed).
func historyQuery(labels map[string]string) (name, status string, ok bool) {
	if labels["owner"] != "helm" || labels["name"] == "" {
		return "", "", false
	}
	switch len(labels) {
	case 2:
		return labels["name"], "", true
	case 3:
		if labels["status"] == helmrelease.StatusDeployed.String() {
			return labels["name"], labels["status"], true
		}
	}
	return "", "", false
}

// stored keeps a remembered history current after a write of rls (gone:
// deleted); a failed write forgets it, to be listed again.
func (d *HeldPending) stored(name string, version int, rls *helmrelease.Release, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, known := d.history[name]
	if !known && err == nil {
		return
	}
	if err != nil {
		if d.failed == nil {
			d.failed = fmt.Errorf("store release %s revision %d: %w", name, version, err)
		}
		delete(d.history, name)
		return
	}
	h = slices.DeleteFunc(slices.Clone(h), func(r *helmrelease.Release) bool { return r.Version == version })
	if rls != nil {
		h = append(h, rls)
	}
	d.history[name] = h
}

func (d *HeldPending) Create(key string, rls *helmrelease.Release) error {
	if rls.Info != nil && rls.Info.Status.IsPending() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.held[key] = rls
		return nil
	}
	err := d.Driver.Create(key, rls)
	d.stored(rls.Name, rls.Version, rls, err)
	return err
}

func (d *HeldPending) Update(key string, rls *helmrelease.Release) error {
	d.mu.Lock()
	_, held := d.held[key]
	if held && rls.Info != nil && rls.Info.Status.IsPending() {
		d.held[key] = rls
		d.mu.Unlock()
		return nil
	}
	delete(d.held, key)
	d.mu.Unlock()
	var err error
	if held {
		err = d.Driver.Create(key, rls)
	} else {
		err = d.Driver.Update(key, rls)
	}
	d.stored(rls.Name, rls.Version, rls, err)
	return err
}

func (d *HeldPending) Get(key string) (*helmrelease.Release, error) {
	d.mu.Lock()
	rls, held := d.held[key]
	d.mu.Unlock()
	if held {
		return rls, nil
	}
	return d.Driver.Get(key)
}

func (d *HeldPending) Delete(key string) (*helmrelease.Release, error) {
	d.mu.Lock()
	rls, held := d.held[key]
	delete(d.held, key)
	d.mu.Unlock()
	if held {
		return rls, nil
	}
	rls, err := d.Driver.Delete(key)
	if err != nil {
		d.forget()
	} else {
		d.stored(rls.Name, rls.Version, nil, nil)
	}
	return rls, err
}

// forget drops every remembered history (a failed delete names no release).
func (d *HeldPending) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.history)
}
