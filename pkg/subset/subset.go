// Package subset tells whether one decoded JSON document is contained in
// another: every field the first sets has the same value in the second.
// The operator uses it to skip drift-repair patches that would change nothing
// (the API server fills in defaults the rendered manifest does not mention).
package subset

import "reflect"

// Of reports whether want is contained in have. Maps: every key of want is
// in have with a contained value. Lists: same length, element-wise
// contained. Anything else: deeply equal. Both sides are expected to come
// from encoding/json (numbers as float64).
func Of(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if wv == nil {
					continue // a null field is an absent field
				}
				return false
			}
			if !Of(wv, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !Of(w[i], h[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(want, have)
	}
}
