package olm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
)

// The CSV's minKubeVersion is one every chart renders at: OLM must not
// install the operator where its charts refuse the cluster.
func TestMinKubeVersionIsTheCharts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "config", "manifests", "bases", "ai-stack-operator.clusterserviceversion.yaml"))
	require.NoError(t, err)
	var csv struct {
		Spec struct {
			MinKubeVersion string `json:"minKubeVersion"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(b, &csv))
	minVersion, err := semver.NewVersion(csv.Spec.MinKubeVersion)
	require.NoError(t, err, "minKubeVersion %q", csv.Spec.MinKubeVersion)
	below := semver.New(minVersion.Major(), minVersion.Minor()-1, 0, "", "")
	for _, name := range []string{"llama-stack-distribution", "ogx-server", "trustyai-service"} {
		c, err := charts.Load(name)
		require.NoError(t, err)
		constraint, err := semver.NewConstraint(c.Metadata.KubeVersion)
		require.NoError(t, err, name)
		assert.True(t, constraint.Check(minVersion), "%s (kubeVersion %s) refuses the CSV's minKubeVersion %s", name, c.Metadata.KubeVersion, minVersion)
		assert.False(t, constraint.Check(below), "%s accepts %s: minKubeVersion %s is higher than needed", name, below, minVersion)
	}
}

// The manifests' image tag is the VERSION file's, as the bundle's is.
func TestManagerImageTagIsTheVersion(t *testing.T) {
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "config", "manager", "kustomization.yaml"))
	require.NoError(t, err)
	var k struct {
		Images []struct {
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	require.NoError(t, yaml.Unmarshal(b, &k))
	require.Len(t, k.Images, 1)
	assert.Equal(t, "v"+strings.TrimSpace(string(version)), k.Images[0].NewTag)
}

// OpenShift's disconnected feature promises that every image the operator
// runs is pinned by digest (so a mirror can serve it); the CSV claims it
// only when each related image is.
func TestDisconnectedOnlyWithDigests(t *testing.T) {
	csv := committedCSV(t)
	var byTag []string
	for _, ri := range csv.Spec.RelatedImages {
		if !strings.Contains(ri.Image, "@sha256:") {
			byTag = append(byTag, ri.Image)
		}
	}
	claimed := csv.Annotations["features.operators.openshift.io/disconnected"]
	if len(byTag) > 0 {
		assert.Equal(t, "false", claimed, "disconnected claimed with images by tag: %v", byTag)
	}
	assert.Contains(t, []string{"true", "false"}, claimed)
}
