package proxybinding

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A binding is the CR's when the owner labels match, whatever its UID; one
// of another owner is not.
func TestLabelledOwnership(t *testing.T) {
	labels := map[string]string{"kind": "EvalHub", "ns": "a", "name": "hub", "uid": "1"}
	b := Labelled("evalhub-proxy.a.hub", "role", rbacv1.Subject{Kind: "ServiceAccount", Namespace: "a", Name: "hub-service"}, labels, []string{"kind", "ns", "name"}, "EvalHub", "x.yaml")
	if b.Want.Name != "evalhub-proxy.a.hub" || b.Want.RoleRef.Name != "role" || len(b.Want.Subjects) != 1 || b.Want.Labels["uid"] != "1" {
		t.Fatalf("want: %+v", b.Want)
	}
	have := func(l map[string]string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	}
	if !b.Ours(have(map[string]string{"kind": "EvalHub", "ns": "a", "name": "hub", "uid": "2"})) {
		t.Error("a re-created CR's binding (another UID) is not adopted")
	}
	for _, other := range []map[string]string{
		{"kind": "EvalHub", "ns": "b", "name": "hub"},
		{"kind": "NemoGuardrails", "ns": "a", "name": "hub"},
		nil,
	} {
		if b.Ours(have(other)) {
			t.Errorf("%v is taken for the CR's", other)
		}
	}
}
