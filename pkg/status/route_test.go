package status

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRouteAdmitted(t *testing.T) {
	route := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"ingress": []any{map[string]any{"conditions": conds}}}}}
	}
	for name, c := range map[string]struct {
		r    *unstructured.Unstructured
		want bool
	}{
		"no status":    {&unstructured.Unstructured{Object: map[string]any{}}, false},
		"admitted":     {route(map[string]any{"type": "Admitted", "status": "True"}), true},
		"not admitted": {route(map[string]any{"type": "Admitted", "status": "False"}), false},
		"other type":   {route(map[string]any{"type": "Other", "status": "True"}), false},
	} {
		if got := RouteAdmitted(c.r); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
