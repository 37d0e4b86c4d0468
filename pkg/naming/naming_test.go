package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
