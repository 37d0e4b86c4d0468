package release

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// The reconciler's caches: what it remembers across reconciles so that an
// unchanged CR causes no writes. Each is a field of the Reconciler; a new
// process starts with all of them empty, which costs a write at most.

// statusCache remembers, per CR, the status the reconciler last wrote and
// the resourceVersion the API server gave the CR with it.
type statusCache struct{ m sync.Map } // the CR's UID -> writtenStatus

// writtenStatus is a status the reconciler wrote.
type writtenStatus struct {
	rv     uint64
	status [sha256.Size]byte
}

// statusOf is the digest of the object's status as JSON (of null when it
// has none): 32 bytes per CR to remember rather than the whole status.
func statusOf(obj client.Object) [sha256.Size]byte {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return [sha256.Size]byte{}
	}
	b, err := json.Marshal(u["status"])
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// written says whether the status computed is the one the reconciler last
// wrote, and the CR it read is older than that write: a reconcile that ran
// before the cache saw its own status write (the finalizer's and the
// objects' events trigger several) writes nothing, and records no
// transitions a second time.
func (c *statusCache) written(read, computed client.Object) bool {
	v, ok := c.m.Load(read.GetUID())
	if !ok {
		return false
	}
	w := v.(writtenStatus)
	rv, err := strconv.ParseUint(read.GetResourceVersion(), 10, 64)
	return err == nil && rv < w.rv && statusOf(computed) == w.status
}

// remember records the status just written.
func (c *statusCache) remember(obj client.Object) {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return // not an etcd revision: no shortcut
	}
	c.m.Store(obj.GetUID(), writtenStatus{rv: rv, status: statusOf(obj)})
}

func (c *statusCache) forget(uid types.UID) { c.m.Delete(uid) }

// refusalCache remembers, per CR, the values the API server refused (422),
// by the digest of values and chart, so that the same values are not sent
// again until the spec or an input changes.
type refusalCache struct{ m sync.Map } // the CR's UID -> refusal

// refusal is a spec the API server refused, by the digest of its values.
type refusal struct {
	digest  string
	failure status.Failure
}

// refused returns the remembered refusal of these values, if any.
func (c *refusalCache) refused(uid types.UID, digest string) *status.Failure {
	if v, ok := c.m.Load(uid); ok && v.(refusal).digest == digest {
		f := v.(refusal).failure
		return &f
	}
	return nil
}

// remember records the outcome of sending values: a refusal by the API
// server (InvalidSpec) is kept; anything else forgets an earlier one.
func (c *refusalCache) remember(uid types.UID, digest string, f *status.Failure) {
	if f != nil && f.Reason == status.ReasonInvalidSpec {
		c.m.Store(uid, refusal{digest: digest, failure: *f})
		return
	}
	c.m.Delete(uid)
}

func (c *refusalCache) forget(uid types.UID) { c.m.Delete(uid) }

// manifestCache remembers the object lists of the last manifests, by
// digest. Every reconcile lists the deployed release's objects, whose
// manifest changes only with an upgrade.
type manifestCache struct {
	mu    sync.Mutex
	lists map[[sha256.Size]byte][]ObjectRef
}

// manifestCacheSize bounds the lists the cache holds (a few hundred bytes
// each): one per CR up to a thousand or two, and then it starts over.
const manifestCacheSize = 2048

// objects lists the objects of a release manifest, sorted by kind and name.
// The caller owns the list it gets.
func (c *manifestCache) objects(manifest string) []ObjectRef {
	key := sha256.Sum256([]byte(manifest))
	c.mu.Lock()
	objs, ok := c.lists[key]
	c.mu.Unlock()
	if !ok {
		objs = parseManifestObjects(manifest)
		c.mu.Lock()
		if c.lists == nil || len(c.lists) >= manifestCacheSize {
			c.lists = map[[sha256.Size]byte][]ObjectRef{}
		}
		c.lists[key] = objs
		c.mu.Unlock()
	}
	return slices.Clone(objs)
}

// driftCache remembers, per CR, the release revision whose objects the last
// drift check found as rendered, and the resourceVersion each had in the
// cache then. While the revision and every one of those versions are the
// same, another check would find what the last one found: it is skipped, no
// manifest parsed and nothing compared. The objects' own events (a create,
// a status update by their controller) reconcile the CR several times in a
// burst; each such reconcile cost a parse of the manifest and a comparison
// of every object (issue 33). A check that read any object from the API
// server (a type the cache does not hold, or an object it missed) or
// repaired anything is not remembered.
type driftCache struct{ m sync.Map } // the CR's UID -> checkedRelease

// checkedRelease is a release revision whose objects were found as rendered.
type checkedRelease struct {
	revision string
	objects  []checkedObject
}

// checkedObject is one object of a checked release, as the cache held it.
type checkedObject struct {
	gvk             schema.GroupVersionKind
	namespace, name string
	resourceVersion string
}

// unchanged says whether revision is the one last found as rendered for the
// CR and every object of it still has the version it had (version reads it
// from the cache; "" when the cache does not hold it).
func (c *driftCache) unchanged(uid types.UID, revision string, version func(checkedObject) string) bool {
	v, ok := c.m.Load(uid)
	if !ok || v.(checkedRelease).revision != revision {
		return false
	}
	for _, o := range v.(checkedRelease).objects {
		if rv := version(o); rv == "" || rv != o.resourceVersion {
			return false
		}
	}
	return true
}

func (c *driftCache) remember(uid types.UID, revision string, objects []checkedObject) {
	c.m.Store(uid, checkedRelease{revision: revision, objects: objects})
}

func (c *driftCache) forget(uid types.UID) { c.m.Delete(uid) }
