package operator

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// These names are what a running install owns things by: renaming any of
// them orphans releases, objects, finalizers or the leader's lease of every
// CR that exists. A change here needs a migration, not a test update.
func TestUpgradeInvariants(t *testing.T) {
	assert.Equal(t, "ai-stack-operator.io", LeaderElectionID, "leader election lease")
	assert.Equal(t, "ai-stack-operator", release.ManagedBy, "event source and Helm's field manager")
	assert.Equal(t, "ai-stack-operator.io/uninstall", release.Finalizer)
	assert.Equal(t, "ai-stack-operator.io/managed", release.LabelManaged, "cache selector of every object the operator owns")
	assert.Equal(t, "ai-stack-operator.io/chart-digest", release.LabelChartDigest)
	assert.Equal(t, "ai-stack-operator.io/owner-kind", release.LabelOwnerKind, "the sweep finds a record's CR by these")
	assert.Equal(t, "ai-stack-operator.io/owner-namespace", release.LabelOwnerNamespace)
	assert.Equal(t, "ai-stack-operator.io/owner-uid", release.LabelOwnerUID)
	assert.Equal(t, "llsd", llamastack.Meta().ReleasePrefix, "Helm release names")
	assert.Equal(t, "configmap.hash/user-config", llamastack.AnnotationUserConfigHash, "upstream's restart annotation")
	assert.Equal(t, "configmap.hash/ca-bundle", llamastack.AnnotationCABundleHash, "upstream's restart annotation")
}

// Release names spell a CR exactly ("<prefix>-<namespace>.<name>", pkg/naming)
// only while every kind's prefix is distinct and holds no dash or dot, and
// the long form keeps 32 hex characters within Helm's 53 only with a short
// prefix.
func TestReleasePrefixesKeepReleaseNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range rendered() {
		p := e.meta().ReleasePrefix
		assert.Regexp(t, `^[a-z0-9]{1,16}$`, p, "kind %s", e.meta().GVK.Kind)
		assert.False(t, seen[p], "prefix %q used twice", p)
		seen[p] = true
	}
	assert.GreaterOrEqual(t, len(seen), 2)
}
