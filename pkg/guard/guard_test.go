package guard

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

var policy = Policy{
	Namespace: "team-a",
	Kinds:     mustKinds("Deployment.apps, Service, ConfigMap, NetworkPolicy.networking.k8s.io"),
}

func mustKinds(s string) []schema.GroupKind {
	k, err := ParseKinds(s)
	if err != nil {
		panic(err)
	}
	return k
}

const deployment = `---
# Source: chart/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo
`

const service = `---
apiVersion: v1
kind: Service
metadata:
  name: demo-service
  namespace: team-a
`

func TestCheckAccepts(t *testing.T) {
	objs, err := Check(deployment+service+"---\n# only a comment\n---\n", policy)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Kind != "Deployment" || objs[1].Name != "demo-service" {
		t.Fatalf("objects: %+v", objs)
	}
}

// refusals are manifests the policy refuses, with what the error says.
var refusals = []struct {
	name, manifest, want string
}{
	{"other namespace", deployment + "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\n  namespace: team-b\n", `NetworkPolicy team-b/deny) is outside the CR's namespace "team-a"`},
	{"undeclared kind", deployment + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: x\n", "ClusterRoleBinding.rbac.authorization.k8s.io, which the chart does not declare"},
	{"same kind other group", "---\napiVersion: example.com/v1\nkind: Deployment\nmetadata:\n  name: x\n", "Deployment.example.com, which the chart does not declare"},
	{"list", "---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n    namespace: team-b\n", "kind List, which the chart does not declare"},
	{"hook", "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/hook: pre-install\n", "is a Helm hook"},
	{"no name", "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "has no metadata.name"},
	{"no kind", "---\napiVersion: v1\nmetadata:\n  name: x\n", "has no apiVersion or kind"},
	{"garbage", "---\napiVersion: v1\nkind: [\n", "is not a valid object"},
	{"twice", deployment + deployment, "is rendered twice"},
	{"string is not a map", "---\njust a string\n", "is not a valid object"},
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.manifest, policy)
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("want a violation, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestCheckKeep(t *testing.T) {
	objs, err := Check("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/resource-policy: keep\n", policy)
	if err != nil || len(objs) != 1 || !objs[0].Keep {
		t.Fatalf("objects %+v, err %v", objs, err)
	}
}

func TestParseKinds(t *testing.T) {
	if _, err := ParseKinds(" , "); err == nil {
		t.Fatal("an empty list must be refused")
	}
	if _, err := ParseKinds("apps/v1 Deployment"); err == nil {
		t.Fatal("a malformed kind must be refused")
	}
	k := mustKinds("Deployment.apps,Service")
	if k[0] != (schema.GroupKind{Group: "apps", Kind: "Deployment"}) || k[1] != (schema.GroupKind{Kind: "Service"}) {
		t.Fatalf("kinds %v", k)
	}
}

func TestOwnership(t *testing.T) {
	o := Ownership{Label: "ai-stack-operator.io/managed", Release: "llsd-demo", Owner: schema.GroupKind{Group: "llamastack.io", Kind: "LlamaStackDistribution"}, Namespace: "team-a", Name: "demo"}
	label := map[string]string{"ai-stack-operator.io/managed": "true"}
	helm := map[string]string{AnnotationReleaseName: "llsd-demo", AnnotationReleaseNamespace: "team-a"}
	ctrl := func(apiVersion, kind, name string) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: &yes}}
	}
	ours := ctrl("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo")
	kept := map[string]string{AnnotationReleaseName: "llsd-demo", AnnotationReleaseNamespace: "team-a", annotationPrimaryResource: "team-a/demo", annotationPrimaryResourceType: "LlamaStackDistribution.llamastack.io"}
	for _, tc := range []struct {
		name        string
		labels, ann map[string]string
		refs        []metav1.OwnerReference
		want        string // "" = owned
	}{
		{"ours", label, helm, ours, ""},
		{"kept by Helm, owner annotations", label, kept, nil, ""},
		{"a user's ConfigMap", nil, nil, nil, "lacks the label"},
		{"labelled but another release", label, map[string]string{AnnotationReleaseName: "llsd-other", AnnotationReleaseNamespace: "team-a"}, ours, "does not belong to Helm release team-a/llsd-demo"},
		{"labelled but another namespace's release", label, map[string]string{AnnotationReleaseName: "llsd-demo", AnnotationReleaseNamespace: "team-b"}, ours, "does not belong"},
		{"controlled by something else", label, helm, ctrl("apps/v1", "ReplicaSet", "demo"), "its controller is ReplicaSet demo"},
		{"controlled by another CR", label, helm, ctrl("llamastack.io/v1alpha1", "LlamaStackDistribution", "other"), "its controller is LlamaStackDistribution other"},
		{"no controller, no owner annotations", label, helm, nil, "is not controlled by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.Check("ConfigMap team-a/demo-config", tc.labels, tc.ann, tc.refs)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var c *Conflict
			if !errors.As(err, &c) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a conflict containing %q, got %v", tc.want, err)
			}
			if !strings.Contains(err.Error(), "ConfigMap team-a/demo-config") {
				t.Fatalf("the error must name the object: %v", err)
			}
		})
	}
	// Objects written outside Helm (the CA bundle) have no release annotations.
	goOwned := Ownership{Label: o.Label, Owner: o.Owner, Namespace: "team-a", Name: "demo"}
	if err := goOwned.Check("ConfigMap team-a/demo-ca-bundle", label, nil, ours); err != nil {
		t.Fatal(err)
	}
}

func TestFilter(t *testing.T) {
	out, refused := Filter(deployment+"---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\n  namespace: team-b\n"+service, policy)
	if len(refused) != 1 || !strings.Contains(refused[0].Error(), "team-b/deny") {
		t.Fatalf("refused: %v", refused)
	}
	objs, err := Check(out, policy)
	if err != nil || len(objs) != 2 {
		t.Fatalf("kept %+v, %v", objs, err)
	}
}

// parsed parses a manifest's documents into objects, as Helm's kube client
// does before it applies them; ok is false when one is not an object.
func parsed(manifest string) (objs []*unstructured.Unstructured, ok bool) {
	for _, doc := range splitDocuments(manifest) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.Object == nil {
			return nil, false
		}
		objs = append(objs, u)
	}
	return objs, true
}

// CheckObjects, which the gate runs on what Helm builds, accepts and refuses
// what Check does, with the same messages.
func TestCheckObjectsAgreesWithCheck(t *testing.T) {
	objs, ok := parsed(deployment + service)
	if !ok {
		t.Fatal("the accepted manifest does not parse")
	}
	got, err := CheckObjects(objs, policy)
	want, _ := Check(deployment+service, policy)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("CheckObjects = %+v, %v; Check = %+v", got, err, want)
	}
	compared := 0
	for _, tc := range refusals {
		objs, ok := parsed(tc.manifest)
		if !ok {
			continue // the gate checks a manifest Helm cannot build as text, with Check
		}
		compared++
		_, err := CheckObjects(objs, policy)
		_, textErr := Check(tc.manifest, policy)
		var v *Violation
		if !errors.As(err, &v) || err.Error() != textErr.Error() {
			t.Errorf("%s: CheckObjects says %v, Check %v", tc.name, err, textErr)
		}
	}
	if compared < 7 {
		t.Fatalf("only %d refusals compared", compared)
	}
}

// Annotations that are not strings are refused, not read as none (a hook
// written as a number would otherwise pass).
func TestCheckObjectsRefusesAnnotationsThatAreNotStrings(t *testing.T) {
	objs, ok := parsed("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/hook: 1\n")
	if !ok {
		t.Fatal("does not parse")
	}
	_, err := CheckObjects(objs, policy)
	if err == nil || !strings.Contains(err.Error(), "metadata.annotations must map strings to strings") {
		t.Fatalf("got %v", err)
	}
}

// An object is the CR's own to take over only when its controller reference
// is this CR by kind, name and UID (the upstream operator made it for this
// CR); the same name or kind without the UID, another group, or a mere
// owner reference is not.
func TestTakesOver(t *testing.T) {
	o := Ownership{Label: "ai-stack-operator.io/managed", Release: "llsd-demo", Owner: schema.GroupKind{Group: "llamastack.io", Kind: "LlamaStackDistribution"}, Namespace: "team-a", Name: "demo", UID: "uid-1"}
	yes, no := true, false
	ref := func(apiVersion, kind, name string, uid types.UID, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: controller}}
	}
	for _, tc := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"this CR's controller reference", ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo", "uid-1", &yes), true},
		{"another version of the API", ref("llamastack.io/v1beta1", "LlamaStackDistribution", "demo", "uid-1", &yes), true},
		{"an earlier CR of the name", ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo", "uid-0", &yes), false},
		{"another group", ref("ogx.io/v1beta1", "LlamaStackDistribution", "demo", "uid-1", &yes), false},
		{"another name", ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "other", "uid-1", &yes), false},
		{"an owner, not the controller", ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo", "uid-1", &no), false},
		{"no reference (a user's object)", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := o.TakesOver(tc.refs); got != tc.want {
				t.Fatalf("TakesOver = %v, want %v", got, tc.want)
			}
		})
	}
	o.UID = ""
	if o.TakesOver(ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo", "uid-1", &yes)) {
		t.Fatal("without the CR's UID nothing is taken over")
	}
	labels, ann := Ownership{Label: "l", Release: "r", Namespace: "ns"}.TakeOverMarks()
	if labels["l"] != "true" || labels[LabelHelmManagedBy] != "Helm" || ann[AnnotationReleaseName] != "r" || ann[AnnotationReleaseNamespace] != "ns" {
		t.Fatalf("marks %v %v", labels, ann)
	}
	// What the marks make of the object is what Check wants.
	if err := (Ownership{Label: "l", Release: "r", Namespace: "ns", Name: "demo", Owner: o.Owner}).Check("Service ns/demo-service", labels, ann, ref("llamastack.io/v1alpha1", "LlamaStackDistribution", "demo", "uid-1", &yes)); err != nil {
		t.Fatal(err)
	}
}

// Every object in the way is named at once, and a claim is never to be
// deleted to make way.
func TestConflictsNameEveryObjectAndKeepClaims(t *testing.T) {
	cs := Conflicts{
		{Object: "NetworkPolicy team-a/demo-network-policy", Why: "it lacks the label l=true"},
		{Object: "PersistentVolumeClaim team-a/demo-pvc", Why: "it lacks the label l=true"},
	}
	msg := cs.Error()
	for _, want := range []string{"2 objects", "NetworkPolicy team-a/demo-network-policy", "PersistentVolumeClaim team-a/demo-pvc", "do not delete it to make way"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	one := Conflicts{cs[1]}.Error()
	if !strings.Contains(one, "do not delete it") || strings.Contains(one, "rename or delete that object") {
		t.Errorf("a claim alone: %q", one)
	}
	if other := (Conflicts{cs[0]}).Error(); !strings.Contains(other, "rename or delete that object") {
		t.Errorf("another object alone: %q", other)
	}
}
