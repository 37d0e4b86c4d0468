package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// FuzzParse feeds arbitrary values (and RELATED_IMAGE_ variables) to the
// settings parsers: they never panic, and a value they refuse is a
// *status.Failure of reason InvalidOperatorSettings that names its key.
func FuzzParse(f *testing.F) {
	for _, s := range []struct{ value, env string }{
		{"starter: quay.io/x/y:1\n", "RELATED_IMAGE_STARTER=mirror/y@sha256:0"},
		{"enabled", ""}, {"disabled", ""}, {"sometimes", ""},
		{"600", ""}, {"-1", ""}, {"99999999999", ""},
		{"Issuer/ca", ""}, {"ClusterIssuer/", ""}, {"a/b/c", ""},
		{"{a: [}", "RELATED_IMAGE_=x"}, {"", "="},
	} {
		f.Add(s.value, s.env)
	}
	const key = "fuzz-key"
	f.Fuzz(func(t *testing.T, value, env string) {
		data := map[string]string{key: value}
		check := func(err error) {
			t.Helper()
			if err == nil {
				return
			}
			var failure *status.Failure
			if !errors.As(err, &failure) || failure.Reason != status.ReasonInvalidOperatorSettings || !strings.Contains(err.Error(), key) {
				t.Fatalf("a refusal that does not name the setting: %v", err)
			}
		}
		images, err := Images(map[string]string{"starter": "docker.io/llamastack/distribution-starter:0.2.23"}, []string{env}, data, key, "distribution")
		check(err)
		if err == nil && images["starter"] == "" {
			t.Fatalf("a distribution lost its image: %v", images)
		}
		_, err = Switch(data, key, true)
		check(err)
		_, err = Seconds(data, key)
		check(err)
		_, _, err = KindName(data, key, "Issuer", "ClusterIssuer")
		check(err)
		_ = Image(data, key, []string{env}, "RELATED_IMAGE_X", "default/image:1")
	})
}
