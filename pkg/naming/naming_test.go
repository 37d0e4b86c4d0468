package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestReleaseName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name, prefix, ns, in, want string
	}{
		{"short", "llsd", "team-a", "demo", "llsd-team-a.demo"},
		{"exactly the limit", "llsd", "ns", strings.Repeat("b", 45), "llsd-ns." + strings.Repeat("b", 45)},
		{"over the limit", "llsd", "ns", long, ""},
		{"cut at a dash", "llsd", "ns", strings.Repeat("c", 35) + "-" + strings.Repeat("d", 30), ""},
		{"long namespace", "llsd", strings.Repeat("n", 63), "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReleaseName(tt.prefix, tt.ns, tt.in)
			assert.LessOrEqual(t, len(got), MaxReleaseNameLength)
			assert.Empty(t, validation.IsDNS1123Subdomain(got))
			assert.False(t, strings.Contains(got, "--"), got)
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			}
		})
	}
	assert.NotEqual(t, ReleaseName("llsd", "ns", long+"x"), ReleaseName("llsd", "ns", long+"y"), "long names must stay distinct")
	assert.NotEqual(t, ReleaseName("llsd", "ns", "x"), ReleaseName("tas", "ns", "x"), "kinds must not share releases")
	assert.NotEqual(t, ReleaseName("llsd", "a", "b-c"), ReleaseName("llsd", "a-b", "c"), "namespace and name stay apart")
}

// collidingPair are two CRs in two namespaces whose releases were one under
// the 32-bit names of earlier versions (found by a birthday search in 17 s
// on 2 cores): the second made the operator delete the first's objects.
var collidingPair = [2][2]string{
	{"payments-analytics-platform-team-tenant-prod", "fraud-metrics-738531"},
	{"payments-analytics-platform-team-tenant-dev", "metrics-10785"},
}

func TestReleaseNamesDoNotCollide(t *testing.T) {
	a, b := collidingPair[0], collidingPair[1]
	require.Equal(t, LegacyReleaseName("llsd", a[0], a[1]), LegacyReleaseName("llsd", b[0], b[1]), "the pair collided under the legacy names")
	assert.NotEqual(t, ReleaseName("llsd", a[0], a[1]), ReleaseName("llsd", b[0], b[1]))

	// The same namespace needs no search: a CR named what a long name is cut
	// to had that name's release.
	ns, long := "team", strings.Repeat("model-", 12)+"x"
	victim := LegacyReleaseName("llsd", ns, long)
	thief := strings.TrimPrefix(victim, "llsd-"+ns+".")
	require.Equal(t, victim, LegacyReleaseName("llsd", ns, thief), "the thief's name spelt the victim's legacy release")
	assert.NotEqual(t, ReleaseName("llsd", ns, long), ReleaseName("llsd", ns, thief))

	// A long name's release has no dot, so it is never another CR's short one,
	// and keeps 128 bits of its hash.
	for _, in := range [][2]string{{ns, long}, {strings.Repeat("n", 63), "x"}, {"a", strings.Repeat("b.", 30) + "c"}} {
		got := ReleaseName("llsd", in[0], in[1])
		assert.NotContains(t, got, ".", got)
		assert.Regexp(t, `-[0-9a-f]{32}$`, got)
		assert.LessOrEqual(t, len(got), MaxReleaseNameLength)
		assert.Empty(t, validation.IsDNS1123Subdomain(got), got)
	}
	assert.Equal(t, "llsd-team.demo", ReleaseName("llsd", "team", "demo"), "short names stay as they were")
	assert.Equal(t, LegacyReleaseName("llsd", "team", "demo"), ReleaseName("llsd", "team", "demo"), "short names need no migration")
}

func TestNameLabel(t *testing.T) {
	assert.Equal(t, "demo", NameLabel("demo"))
	long := strings.Repeat("a", 64)
	got := NameLabel(long)
	assert.Len(t, got, 63)
	assert.Empty(t, validation.IsValidLabelValue(got))
	assert.NotEqual(t, got, NameLabel(long+"b"))
	assert.Empty(t, validation.IsValidLabelValue(NameLabel(strings.Repeat("a.", 126)+"b")))
}

func TestChildName(t *testing.T) {
	assert.Equal(t, "demo-service", ChildName("demo", "-service"))
	long := strings.Repeat("x", 70)
	got := ChildName(long, "-service")
	assert.Len(t, got, 63)
	assert.True(t, strings.HasSuffix(got, "-service"))
	assert.Empty(t, validation.IsDNS1035Label(got))
	assert.NotEqual(t, got, ChildName(long+"y", "-service"))
}

func TestServiceName(t *testing.T) {
	assert.Equal(t, "demo-service", ServiceName("demo", "-service"), "valid names keep the upstream Service name")
	for _, name := range []string{"my.llama", "1st", "0", "a.b.c", "9.9", strings.Repeat("a.", 120) + "b", "x" + strings.Repeat("1", 252)} {
		got := ServiceName(name, "-service")
		assert.Empty(t, validation.IsDNS1035Label(got), "%q -> %q", name, got)
		assert.True(t, strings.HasSuffix(got, "-service"), got)
	}
	assert.NotEqual(t, ServiceName("a.b", "-service"), ServiceName("a-b", "-service"), "names that differ only by dots stay distinct")
	assert.Equal(t, "my-llama-"+ServiceName("my.llama", "-service")[9:17]+"-service", ServiceName("my.llama", "-service"))
	assert.True(t, strings.HasPrefix(ServiceName("1st", "-service"), "s-1st-"), ServiceName("1st", "-service"))
}
