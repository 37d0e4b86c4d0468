package trustyai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The volume of <name>-internal in ModelMesh's Deployments is a DNS label
// for every name the CRD admits (<name>-internal is 64 to 68 characters for
// names of 55 to 59), unchanged for shorter names, distinct per name.
func TestModelMeshVolumeName(t *testing.T) {
	seen := map[string]string{}
	for n := 1; n <= 59; n++ {
		for _, name := range []string{strings.Repeat("m", n), "m" + strings.Repeat("-", max(n-2, 0)) + strings.Repeat("9", min(n-1, 1))} {
			got := modelMeshVolumeName(name)
			assert.Empty(t, validation.IsDNS1123Label(got), "%d: %q", n, got)
			if len(name) <= 54 {
				assert.Equal(t, internalSecretName(name), got, "the Secret's name where it fits")
			}
			if other, ok := seen[got]; ok && other != name {
				t.Errorf("%q and %q share the volume %q", other, name, got)
			}
			seen[got] = name
		}
	}
	long := strings.Repeat("x", 50)
	assert.NotEqual(t, modelMeshVolumeName(long+"-aaaaaaa"), modelMeshVolumeName(long+"-bbbbbbb"), "names that share the cut part stay apart")
}

// Hosts are DNS names for the longest name, namespace and domain, and no
// two CRs share one (OpenShift's <name>-<namespace> would).
func TestIngressHost(t *testing.T) {
	host := ingressHost(strings.Repeat("t", 59), strings.Repeat("n", 63), longestDomain)
	assert.Len(t, host, 253)
	assert.Empty(t, validation.IsDNS1123Subdomain(host))
	for _, label := range strings.Split(host, ".") {
		assert.Empty(t, validation.IsDNS1123Label(label), label)
	}
	assert.Equal(t, "trustyai-service.team-a.apps.example.com", ingressHost("trustyai-service", "team-a", "apps.example.com"))
	assert.NotEqual(t, ingressHost("a-b", "c", "apps.example.com"), ingressHost("a", "b-c", "apps.example.com"))
}
