package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// These names are what a running install owns things by: renaming any of
// them orphans releases, objects, finalizers or the leader's lease of every
// CR that exists. A change here needs a migration, not a test update.
func TestUpgradeInvariants(t *testing.T) {
	assert.Equal(t, "ai-stack-operator.io", LeaderElectionID, "leader election lease")
	assert.Equal(t, "ai-stack-operator", ManagedBy, "event source and Helm's field manager")
	assert.Equal(t, "ai-stack-operator.io/uninstall", Finalizer)
	assert.Equal(t, "ai-stack-operator.io/managed", LabelManaged, "cache selector of every object the operator owns")
	assert.Equal(t, "ai-stack-operator.io/chart-digest", LabelChartDigest)
	assert.Equal(t, "llsd", (&LlamaStack{}).ReleasePrefix(), "Helm release names")
	assert.Equal(t, "configmap.hash/user-config", values.AnnotationUserConfigHash, "upstream's restart annotation")
	assert.Equal(t, "configmap.hash/ca-bundle", values.AnnotationCABundleHash, "upstream's restart annotation")
}
