package status

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// RouteAdmitted is true when a router reports the OpenShift Route (read as
// unstructured: the Route API is optional) Admitted.
func RouteAdmitted(route *unstructured.Unstructured) bool {
	ingress, _, _ := unstructured.NestedSlice(route.Object, "status", "ingress")
	for _, i := range ingress {
		m, _ := i.(map[string]any)
		conds, _, _ := unstructured.NestedSlice(m, "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Admitted" && cm["status"] == "True" {
				return true
			}
		}
	}
	return false
}
