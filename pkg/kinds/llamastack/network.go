package llamastack

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// TypeAllowedFromValid says whether every entry of spec.network.allowedFrom
// can match a namespace (and so is in the NetworkPolicy). It is present only
// while spec.network.allowedFrom is set; False comes with a Warning event.
const TypeAllowedFromValid = "AllowedFromValid"

// Reasons of TypeAllowedFromValid.
const (
	ReasonAllowedFromValid   = "AllEntriesValid"
	ReasonAllowedFromIgnored = "EntriesIgnored"
)

// allowedSources are the NetworkPolicy sources spec.network.allowedFrom
// gives, and the entries left out because no namespace can match them.
type allowedSources struct {
	// AllowAll: a namespaces entry "*".
	AllowAll bool
	// Namespaces are namespace names (DNS-1123 labels), matched as
	// kubernetes.io/metadata.name.
	Namespaces []string
	// LabelKeys are label keys a namespace must carry (operator Exists).
	LabelKeys []string
	// MatchLabels are "key=value" entries: a namespace must carry the label with that value.
	MatchLabels []map[string]string
	// Ignored say, one per entry left out, which field and why.
	Ignored []string
}

// allowedFromSources sorts the entries of spec.network.allowedFrom. The API
// admits any non-empty string, as upstream does; an entry that can match no
// namespace (a namespace name that is no DNS-1123 label, such as "nsA", or a
// label entry that is neither a label key nor key=value) is left out of the
// NetworkPolicy, never rendered, and reported (TypeAllowedFromValid), while
// the rest of the spec applies.
func allowedFromSources(af *llamav1alpha1.AllowedFromSpec) allowedSources {
	var out allowedSources
	if af == nil {
		return out
	}
	for i, ns := range af.Namespaces {
		field := fmt.Sprintf("spec.network.allowedFrom.namespaces[%d]", i)
		switch {
		case ns == "*":
			out.AllowAll = true
		case len(validation.IsDNS1123Label(ns)) == 0:
			out.Namespaces = append(out.Namespaces, ns)
		default:
			msg := fmt.Sprintf("%s %s is not a namespace name (lowercase letters, digits and '-', at most 63 characters), so no namespace can match it", field, status.Quote(ns))
			if lower := strings.ToLower(ns); lower != ns && len(validation.IsDNS1123Label(lower)) == 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", lower)
			}
			out.Ignored = append(out.Ignored, msg)
		}
	}
	for i, l := range af.Labels {
		field := fmt.Sprintf("spec.network.allowedFrom.labels[%d]", i)
		if len(validation.IsQualifiedName(l)) == 0 {
			out.LabelKeys = append(out.LabelKeys, l)
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok && len(validation.IsQualifiedName(k)) == 0 && len(validation.IsValidLabelValue(v)) == 0 {
			out.MatchLabels = append(out.MatchLabels, map[string]string{k: v})
			continue
		}
		out.Ignored = append(out.Ignored, fmt.Sprintf("%s %s is neither a label key (such as example.com/team) nor key=value (such as team=frontend), so no namespace can match it", field, status.Quote(l)))
	}
	if out.AllowAll {
		out.Namespaces = nil
	}
	return out
}

// allowedFromCondition is TypeAllowedFromValid for the spec, nil when
// spec.network.allowedFrom is not set.
func allowedFromCondition(n *llamav1alpha1.NetworkSpec) *metav1.Condition {
	if n == nil || n.AllowedFrom == nil {
		return nil
	}
	src := allowedFromSources(n.AllowedFrom)
	if len(src.Ignored) == 0 {
		return ptr.To(status.True(TypeAllowedFromValid, ReasonAllowedFromValid, "every entry of spec.network.allowedFrom can match namespaces"))
	}
	what := fmt.Sprintf("%d entries are", len(src.Ignored))
	if len(src.Ignored) == 1 {
		what = "1 entry is"
	}
	return ptr.To(status.False(TypeAllowedFromValid, ReasonAllowedFromIgnored,
		fmt.Sprintf("%s left out of the NetworkPolicy (the rest of the spec applies): %s", what, strings.Join(src.Ignored, "; "))))
}
