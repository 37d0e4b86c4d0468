package operator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The operator's generated ClusterRole holds no way into a container
// (LMEvalJob's driver reports by itself; upstream's operator holds
// pods/exec) and writes no Secret.
func TestClusterRoleHasNoExecAndNoSecretWrites(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(raw, role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) == 0 {
		t.Fatal("no rules read")
	}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			if slices.Contains([]string{"pods/exec", "pods/attach", "pods/portforward", "*"}, res) {
				t.Errorf("the ClusterRole grants %s (%v)", res, r.Verbs)
			}
			if res == "secrets" && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
				t.Errorf("the ClusterRole writes Secrets: %v", r.Verbs)
			}
		}
	}
}
