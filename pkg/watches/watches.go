// Package watches loads watches.yaml, the hybrid Helm pattern's contract: which
// kind is rendered through which embedded chart, with which reconcile settings.
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

// Watch is one entry of watches.yaml.
type Watch struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Chart is the name of an embedded chart (a folder under charts/).
	Chart string `json:"chart"`
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
		if w.Group == "" || w.Version == "" || w.Kind == "" || w.Chart == "" {
			return nil, fmt.Errorf("watches entry %d: group, version, kind and chart are required", i)
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
