package helm

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
)

var (
	// ErrReleaseNotFound: no record of the release (or of that revision).
	ErrReleaseNotFound = errors.New("release: not found")
	// ErrReleaseExists: a record of that revision is stored already.
	ErrReleaseExists = errors.New("release: already exists")
	// ErrNoDeployedReleases: the release has records, none deployed.
	ErrNoDeployedReleases = errors.New("has no deployed releases")
)

// Store is one CR's release records, for one reconcile: Helm's storage
// over the CR's records (Records), which lists a release's history once and
// answers the later questions of the same reconcile from it, kept current
// with its own writes. Within one reconcile nothing but this store writes
// the release's records: one leader reconciles, and one CR reconciles at a
// time. A write that fails forgets the history (the next question lists it
// again); its error goes to the caller.
type Store struct {
	records *Records
	mu      sync.Mutex
	history map[string][]*helmrelease.Release
}

// NewStore is the store of a CR's records.
func NewStore(r *Records) *Store {
	return &Store{records: r, history: map[string][]*helmrelease.Release{}}
}

// History is every stored revision of the release, oldest first;
// ErrReleaseNotFound when there is none.
func (s *Store) History(name string) ([]*helmrelease.Release, error) {
	s.mu.Lock()
	h, known := s.history[name]
	s.mu.Unlock()
	if !known {
		listed, err := s.records.Query(map[string]string{"name": name, "owner": "helm"})
		switch {
		case errors.Is(err, ErrReleaseNotFound):
		case err != nil:
			return nil, err
		}
		slices.SortFunc(listed, func(a, b *helmrelease.Release) int { return a.Version - b.Version })
		h = listed
		s.mu.Lock()
		s.history[name] = h
		s.mu.Unlock()
	}
	if len(h) == 0 {
		return nil, ErrReleaseNotFound
	}
	return slices.Clone(h), nil
}

// Last is the release's latest revision.
func (s *Store) Last(name string) (*helmrelease.Release, error) {
	h, err := s.History(name)
	if err != nil {
		return nil, err
	}
	return h[len(h)-1], nil
}

// Deployed is the release's latest deployed revision;
// ErrNoDeployedReleases when none is.
func (s *Store) Deployed(name string) (*helmrelease.Release, error) {
	h, err := s.History(name)
	if err != nil {
		return nil, err
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Info != nil && h[i].Info.Status == rcommon.StatusDeployed {
			return h[i], nil
		}
	}
	return nil, fmt.Errorf("%q %w", name, ErrNoDeployedReleases)
}

// Create stores a new revision, after it deletes the oldest ones beyond
// maxHistory - 1 (never the deployed one), as Helm's storage does; 0 keeps
// every revision.
func (s *Store) Create(rls *helmrelease.Release, maxHistory int) error {
	if maxHistory > 0 {
		if err := s.prune(rls.Name, maxHistory-1); err != nil {
			return err
		}
	}
	err := s.records.Create(recordKey(rls.Name, rls.Version), rls)
	s.stored(rls.Name, rls.Version, rls, err)
	return err
}

// Update replaces a stored revision.
func (s *Store) Update(rls *helmrelease.Release) error {
	err := s.records.Update(recordKey(rls.Name, rls.Version), rls)
	s.stored(rls.Name, rls.Version, rls, err)
	return err
}

// Delete deletes a stored revision.
func (s *Store) Delete(name string, version int) (*helmrelease.Release, error) {
	rls, err := s.records.Delete(recordKey(name, version))
	if err != nil {
		s.mu.Lock()
		delete(s.history, name)
		s.mu.Unlock()
		return nil, err
	}
	s.stored(name, version, nil, nil)
	return rls, nil
}

// prune deletes the oldest revisions until max are left, but the deployed
// one.
func (s *Store) prune(name string, maxHistory int) error {
	h, err := s.History(name)
	switch {
	case errors.Is(err, ErrReleaseNotFound):
		return nil
	case err != nil:
		return err
	case len(h) <= maxHistory:
		return nil
	}
	deployed, err := s.Deployed(name)
	if err != nil && !errors.Is(err, ErrNoDeployedReleases) {
		return err
	}
	var errs []error
	n := len(h)
	for _, rel := range h {
		if n == maxHistory {
			break
		}
		if deployed != nil && rel.Version == deployed.Version {
			continue
		}
		if _, err := s.Delete(name, rel.Version); err != nil && !errors.Is(err, ErrReleaseNotFound) {
			errs = append(errs, err)
			continue
		}
		n--
	}
	return errors.Join(errs...)
}

// stored keeps a remembered history current after a write of rls (gone:
// deleted); a failed write forgets it, to be listed again.
func (s *Store) stored(name string, version int, rls *helmrelease.Release, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, known := s.history[name]
	if err != nil {
		delete(s.history, name)
		return
	}
	if !known {
		return
	}
	h = slices.DeleteFunc(slices.Clone(h), func(r *helmrelease.Release) bool { return r.Version == version })
	if rls != nil {
		h = append(h, rls)
		slices.SortFunc(h, func(a, b *helmrelease.Release) int { return a.Version - b.Version })
	}
	s.history[name] = h
}
