// Package watches loads a watches file: the reconcile settings of each kind
// the operator renders through its embedded chart. The operator serves every
// kind of its registry with default settings without one (pkg/operator's
// Watches); a file, passed with --watches-file, lists the kinds to serve and
// tunes them.
package watches

import (
	"fmt"
	"os"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Watch is one kind to serve and its reconcile settings.
type Watch struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Chart is the name of the embedded chart (a folder under charts/) that
	// renders the kind: the kind's own, which a file may leave out.
	Chart string `json:"chart,omitempty"`
	// ReconcilePeriod, when set, re-reconciles every CR this often even without events.
	ReconcilePeriod *metav1.Duration `json:"reconcilePeriod,omitempty"`
	// MaxConcurrentReconciles defaults to DefaultConcurrency().
	MaxConcurrentReconciles int `json:"maxConcurrentReconciles,omitempty"`
	// MaxReleaseHistory is how many release revisions Helm keeps; default 3.
	MaxReleaseHistory int `json:"maxReleaseHistory,omitempty"`
}

// DefaultConcurrency sizes reconcile concurrency to the machine: 4 per CPU
// the process may use (GOMAXPROCS follows the container's CPU limit), at
// most 16. A reconcile spends most of its time waiting for the API server,
// and each one in flight holds its release's records and render (the
// measurements that chose these numbers: commit 7b756b7).
func DefaultConcurrency() int {
	return min(4*runtime.GOMAXPROCS(0), 16)
}

// GroupVersionKind of the watched kind.
func (w Watch) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: w.Group, Version: w.Version, Kind: w.Kind}
}

// Period is the reconcile period, zero when unset.
func (w Watch) Period() time.Duration {
	if w.ReconcilePeriod == nil {
		return 0
	}
	return w.ReconcilePeriod.Duration
}

// Load reads and validates a watches file.
func Load(path string) ([]Watch, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read watches file: %w", err)
	}
	return Parse(b)
}

// Parse validates the content of a watches file and applies defaults.
func Parse(b []byte) ([]Watch, error) {
	var ws []Watch
	if err := yaml.UnmarshalStrict(b, &ws); err != nil {
		return nil, fmt.Errorf("parse watches file: %w", err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("watches file lists no kind")
	}
	seen := map[schema.GroupVersionKind]bool{}
	for i := range ws {
		w := &ws[i]
		if w.Group == "" || w.Version == "" || w.Kind == "" {
			return nil, fmt.Errorf("watches entry %d: group, version and kind are required", i)
		}
		gvk := w.GroupVersionKind()
		if seen[gvk] {
			return nil, fmt.Errorf("watches entry %d: %s is listed twice", i, gvk)
		}
		seen[gvk] = true
		if w.MaxConcurrentReconciles < 0 || w.MaxReleaseHistory < 0 {
			return nil, fmt.Errorf("watches entry %d (%s): maxConcurrentReconciles and maxReleaseHistory must not be negative", i, w.Kind)
		}
		if w.MaxConcurrentReconciles == 0 {
			w.MaxConcurrentReconciles = DefaultConcurrency()
		}
		if w.MaxReleaseHistory == 0 {
			w.MaxReleaseHistory = 3
		}
	}
	return ws, nil
}
