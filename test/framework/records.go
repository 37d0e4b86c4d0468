package framework

import (
	"fmt"

	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
)

// Records are the operator's release records in its namespace, read and
// written by Helm 4's own ConfigMaps driver and storage (what `helm
// history` reads), for tests that look at them or play an earlier state.
type Records struct {
	driver  *driver.ConfigMaps
	storage *storage.Storage
}

// NewRecords are the release records in namespace.
func NewRecords(cs kubernetes.Interface, namespace string) *Records {
	d := driver.NewConfigMaps(cs.CoreV1().ConfigMaps(namespace))
	return &Records{driver: d, storage: storage.Init(d)}
}

// Key is the name of a revision's record.
func Key(release string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, version)
}

// Get reads a revision.
func (r *Records) Get(release string, version int) (*helmrelease.Release, error) {
	return typed(r.driver.Get(Key(release, version)))
}

// Update writes a revision back.
func (r *Records) Update(rel *helmrelease.Release) error {
	return r.driver.Update(Key(rel.Name, rel.Version), rel)
}

// Deployed is a release's deployed revision.
func (r *Records) Deployed(release string) (*helmrelease.Release, error) {
	return typed(r.storage.Deployed(release))
}

// Query lists the records whose labels match.
func (r *Records) Query(labels map[string]string) ([]*helmrelease.Release, error) {
	found, err := r.driver.Query(labels)
	if err != nil {
		return nil, err
	}
	out := make([]*helmrelease.Release, 0, len(found))
	for _, f := range found {
		rel, err := typed(f, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

// ErrReleaseNotFound is what a query that finds nothing returns.
var ErrReleaseNotFound = driver.ErrReleaseNotFound

func typed(r any, err error) (*helmrelease.Release, error) {
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*helmrelease.Release)
	if !ok {
		return nil, fmt.Errorf("a release record read as %T", r)
	}
	return rel, nil
}
