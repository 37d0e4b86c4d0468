package release

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// A drift check is skipped only for the revision it checked and while every
// object it compared has the version it had.
func TestDriftCacheSkipsOnlyAnUnchangedRelease(t *testing.T) {
	var c driftCache
	uid := types.UID("u1")
	dep := checkedObject{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, namespace: "ns", name: "d", resourceVersion: "7"}
	svc := checkedObject{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, namespace: "ns", name: "s", resourceVersion: "8"}
	versions := map[string]string{"d": "7", "s": "8"}
	version := func(o checkedObject) string { return versions[o.name] }

	assert.False(t, c.unchanged(uid, "rel/1/abc", version), "nothing checked yet")
	c.remember(uid, "rel/1/abc", []checkedObject{dep, svc})
	assert.True(t, c.unchanged(uid, "rel/1/abc", version))
	assert.False(t, c.unchanged(uid, "rel/2/abc", version), "another revision")
	assert.False(t, c.unchanged(uid, "rel/1/def", version), "another chart")
	assert.False(t, c.unchanged("u2", "rel/1/abc", version), "another CR")

	versions["s"] = "9"
	assert.False(t, c.unchanged(uid, "rel/1/abc", version), "an object changed")
	versions["s"] = "8"
	delete(versions, "d")
	assert.False(t, c.unchanged(uid, "rel/1/abc", version), "an object is gone from the cache")
	versions["d"] = "7"
	assert.True(t, c.unchanged(uid, "rel/1/abc", version))
	c.forget(uid)
	assert.False(t, c.unchanged(uid, "rel/1/abc", version), "forgotten")
}
