package guard

import (
	"fmt"
	"sort"
	"strings"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Policy is what a manifest rendered for one CR may contain.
type Policy struct {
	// Namespace is the CR's namespace: every object must be in it (or name none,
	// in which case Helm applies it there).
	Namespace string
	// Kinds are the kinds the chart declares; nothing else may be applied.
	Kinds []schema.GroupKind
	// ClusterScoped are declared kinds that have no namespace (none of our charts has one).
	ClusterScoped []schema.GroupKind
}

// Object names one object of a manifest.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Keep is true when the manifest marks the object helm.sh/resource-policy: keep.
	Keep bool
}

// GroupKind of the object.
func (o Object) GroupKind() schema.GroupKind {
	return schema.FromAPIVersionAndKind(o.APIVersion, o.Kind).GroupKind()
}

// String is "Kind namespace/name" (or "Kind name" without a namespace).
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Violation is a manifest the policy refuses.
type Violation struct {
	// Document is the 1-based position of the offending document.
	Document int
	// Object is what the document declares (as far as it could be read).
	Object Object
	// Rule says which rule it breaks and what that means for the user.
	Rule string
}

func (v *Violation) Error() string {
	what := v.Object.String()
	if strings.TrimSpace(what) == "" {
		what = "an object"
	}
	return fmt.Sprintf("refused to apply the rendered manifest: document %d (%s) %s", v.Document, what, v.Rule)
}

// Annotations Helm reads from rendered objects.
const (
	annotationHook = "helm.sh/hook"
	// AnnotationResourcePolicy "keep" keeps an object when its CR goes.
	AnnotationResourcePolicy = "helm.sh/resource-policy"
)

// Kept says whether annotations keep an object when its CR goes
// (helm.sh/resource-policy: keep, as Helm reads it).
func Kept(annotations map[string]string) bool {
	return strings.ToLower(strings.TrimSpace(annotations[AnnotationResourcePolicy])) == "keep"
}

// Check parses a manifest and checks every object against the policy. It
// returns the objects, sorted by kind and name, or the first violation.
func Check(manifest string, p Policy) ([]Object, error) {
	var heads []head
	for i, doc := range splitDocuments(manifest) {
		var h struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name        string            `json:"name"`
				Namespace   string            `json:"namespace"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &h); err != nil {
			return nil, &Violation{Document: i + 1, Rule: "is not a valid object (" + firstLine(err.Error()) + ")"}
		}
		heads = append(heads, head{document: i + 1, apiVersion: h.APIVersion, kind: h.Kind, name: h.Metadata.Name, namespace: h.Metadata.Namespace, annotations: h.Metadata.Annotations})
	}
	return p.check(heads)
}

// CheckObjects checks objects already parsed from a manifest, in document
// order: what Helm's kube client builds from a manifest, which is what Helm
// applies. It returns what Check returns for the same manifest.
func CheckObjects(objs []*unstructured.Unstructured, p Policy) ([]Object, error) {
	heads := make([]head, 0, len(objs))
	for i, u := range objs {
		h := head{document: i + 1, apiVersion: u.GetAPIVersion(), kind: u.GetKind(), name: u.GetName(), namespace: u.GetNamespace()}
		// GetAnnotations hides annotations that are not a map of strings;
		// the policy reads them as the API server would refuse them.
		annotations, found, err := unstructured.NestedStringMap(u.Object, "metadata", "annotations")
		if err != nil {
			return nil, &Violation{Document: h.document, Object: h.object(), Rule: "is not a valid object (metadata.annotations must map strings to strings)"}
		}
		if found {
			h.annotations = annotations
		}
		heads = append(heads, h)
	}
	return p.check(heads)
}

// head is what the policy reads of one document.
type head struct {
	document                          int
	apiVersion, kind, name, namespace string
	annotations                       map[string]string
}

func (h head) object() Object {
	return Object{APIVersion: h.apiVersion, Kind: h.kind, Namespace: h.namespace, Name: h.name, Keep: Kept(h.annotations)}
}

func (p Policy) check(heads []head) ([]Object, error) {
	allowed := map[schema.GroupKind]bool{}
	for _, gk := range p.Kinds {
		allowed[gk] = true
	}
	cluster := map[schema.GroupKind]bool{}
	for _, gk := range p.ClusterScoped {
		cluster[gk] = true
	}
	seen := map[string]bool{}
	var out []Object
	for _, h := range heads {
		n, obj := h.document, h.object()
		gk := obj.GroupKind()
		switch {
		case h.apiVersion == "" || h.kind == "":
			return nil, &Violation{Document: n, Object: obj, Rule: "has no apiVersion or kind"}
		case !allowed[gk]:
			return nil, &Violation{Document: n, Object: obj, Rule: fmt.Sprintf("is of kind %s, which the chart does not declare (it may render: %s)", gk, kindList(p.Kinds))}
		case h.name == "":
			return nil, &Violation{Document: n, Object: obj, Rule: "has no metadata.name"}
		case cluster[gk] && obj.Namespace != "":
			return nil, &Violation{Document: n, Object: obj, Rule: "is cluster-scoped but names a namespace"}
		case !cluster[gk] && obj.Namespace != "" && obj.Namespace != p.Namespace:
			return nil, &Violation{Document: n, Object: obj, Rule: fmt.Sprintf("is outside the CR's namespace %q; a CR can only make the operator write into its own namespace", p.Namespace)}
		case h.annotations[annotationHook] != "":
			return nil, &Violation{Document: n, Object: obj, Rule: "is a Helm hook; the charts render none"}
		}
		key := gk.String() + "/" + obj.Name
		if seen[key] {
			return nil, &Violation{Document: n, Object: obj, Rule: "is rendered twice"}
		}
		seen[key] = true
		out = append(out, obj)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func splitDocuments(manifest string) []string {
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return docIndex(keys[i]) < docIndex(keys[j]) })
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if strings.TrimSpace(stripComments(docs[k])) == "" {
			continue
		}
		out = append(out, docs[k])
	}
	return out
}

// docIndex reads the position from SplitManifests' "manifest-N" keys.
func docIndex(key string) int {
	var n int
	_, _ = fmt.Sscanf(key, "manifest-%d", &n)
	return n
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func kindList(kinds []schema.GroupKind) string {
	s := make([]string, 0, len(kinds))
	for _, k := range kinds {
		s = append(s, k.String())
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// ParseKinds reads a comma-separated list of kinds in GroupKind.String form
// ("Deployment.apps, Service, ConfigMap"), as charts declare them.
func ParseKinds(list string) ([]schema.GroupKind, error) {
	var out []schema.GroupKind
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		gk := schema.ParseGroupKind(f)
		if gk.Kind == "" || strings.ContainsAny(gk.Kind, " /") {
			return nil, fmt.Errorf("kind %q is not Kind or Kind.group", f)
		}
		out = append(out, gk)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no kinds declared")
	}
	return out, nil
}

// Filter keeps the documents of a manifest that pass the policy one by one,
// and returns the violations of the others. Uninstall uses it on stored
// releases, so that it never deletes outside the CR's namespace either.
func Filter(manifest string, p Policy) (string, []error) {
	var b strings.Builder
	var refused []error
	for _, doc := range splitDocuments(manifest) {
		if _, err := Check(doc, p); err != nil {
			refused = append(refused, err)
			continue
		}
		b.WriteString("---\n")
		b.WriteString(strings.TrimPrefix(doc, "---\n"))
		if !strings.HasSuffix(doc, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), refused
}

// Documents returns the non-empty documents of a manifest, in order.
func Documents(manifest string) []string { return splitDocuments(manifest) }
