package switchover

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

var own = guard.Ownership{Label: "ai-stack-operator.io/managed", Release: "llsd-ns.a", Owner: schema.GroupKind{Group: "llamastack.io", Kind: "LlamaStackDistribution"}, Namespace: "ns", Name: "a", UID: "uid-a"}

func object(name string, labels map[string]string, annotations map[string]string, controller types.UID) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	if controller != "" {
		yes := true
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "llamastack.io/v1alpha1", Kind: "LlamaStackDistribution", Name: "a", UID: controller, Controller: &yes}})
	}
	return u
}

func TestClassifyTellsEachCaseApart(t *testing.T) {
	ours := object("a", map[string]string{"ai-stack-operator.io/managed": "true"}, map[string]string{guard.AnnotationReleaseName: "llsd-ns.a", guard.AnnotationReleaseNamespace: "ns"}, "uid-a")
	upstream := object("a", map[string]string{"app.kubernetes.io/managed-by": "llama-stack-operator"}, nil, "uid-a")
	earlierCR := object("a", nil, nil, "uid-old")
	user := object("a-pvc", nil, nil, "")
	for _, c := range []struct {
		name string
		kind string
		live *unstructured.Unstructured
		want Action
		note string
	}{
		{"absent", "Deployment", nil, Create, "created"},
		{"the operator's", "Deployment", ours, Ours, "already"},
		{"upstream's for this CR", "Deployment", upstream, TakeOver, "same object"},
		{"a CR of the same name before (another UID)", "Deployment", earlierCR, InTheWay, "not created by the operator"},
		{"a user's claim", "PersistentVolumeClaim", user, InTheWay, "do not delete it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, note := Classify(own, c.kind, c.live)
			assert.Equal(t, c.want, got)
			assert.Contains(t, note, c.note)
		})
	}
}

func TestTemplateChangesNameTheFieldsThatDiffer(t *testing.T) {
	before := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i:1", "env": []any{"a"}}}},
	}}}}
	after := before.DeepCopy()
	assert.Empty(t, TemplateChanges(before, after), "equal templates: no rollout")
	_ = unstructured.SetNestedField(after.Object, map[string]any{"hash": "1"}, "spec", "template", "metadata", "annotations")
	_ = unstructured.SetNestedSlice(after.Object, []any{map[string]any{"name": "c", "image": "i:2", "env": []any{"a", "b"}}}, "spec", "template", "spec", "containers")
	assert.Equal(t, []string{
		"spec.template.metadata.annotations",
		"spec.template.spec.containers[0].env",
		"spec.template.spec.containers[0].image",
	}, TemplateChanges(before, after))
}

func TestWriteSaysWhatTheSwitchDoes(t *testing.T) {
	var b strings.Builder
	err := Write(&b, []CR{
		{Kind: "LlamaStackDistribution", Namespace: "ns", Name: "a", Objects: []Object{
			{Kind: "Deployment", Name: "a", Action: TakeOver, Rollout: []string{"spec.template.metadata.annotations"}, Note: "kept"},
			{Kind: "PersistentVolumeClaim", Name: "a-pvc", Action: TakeOver, Note: "kept: same claim"},
		}},
		{Kind: "LlamaStackDistribution", Namespace: "ns", Name: "b", Objects: []Object{
			{Kind: "Deployment", Name: "b", Action: TakeOver, Note: "kept"},
			{Kind: "Service", Name: "b-service", Action: InTheWay, Note: "exists"},
		}},
		{Kind: "TrustyAIService", Namespace: "ns", Name: "c", Problem: "being deleted"},
		{Kind: "TrustyAIService", Namespace: "ns", Name: "d", Finalizers: []string{"trustyai.opendatahub.io/finalizer"}},
	})
	assert.NoError(t, err)
	out := b.String()
	for _, want := range []string{
		"LlamaStackDistribution ns/a\n",
		"  take over   Deployment a: kept\n              rolls out once: the pod template differs in spec.template.metadata.annotations\n",
		"  after the switch: reconciled, 1 rollout(s)\n",
		"              no rollout: the pod template is the same\n",
		"  in the way  Service b-service: exists\n",
		"NameConflict naming the 1 object(s) in the way",
		"TrustyAIService ns/c\n  not looked at: being deleted\n",
		"  finalizer   trustyai.opendatahub.io/finalizer stays on the CR: once its operator is stopped nothing removes it",
	} {
		assert.Contains(t, out, want)
	}
}

func TestAClaimWithoutOwnerIsTakenOverWhenTheCRsWorkloadMountsIt(t *testing.T) {
	claim := object("a-pvc", map[string]string{"app.kubernetes.io/managed-by": "ogx-operator"}, nil, "")
	dep := object("a", nil, nil, "uid-a")
	_ = unstructured.SetNestedSlice(dep.Object, []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "a-pvc"}}}, "spec", "template", "spec", "volumes")
	other := object("b-pvc", nil, nil, "")
	objs := []Object{{Kind: "PersistentVolumeClaim", Name: "a-pvc"}, {Kind: "Deployment", Name: "a"}, {Kind: "PersistentVolumeClaim", Name: "b-pvc"}}
	lives := []*unstructured.Unstructured{claim, dep, other}
	for i := range objs {
		objs[i].Action, objs[i].Note = Classify(own, objs[i].Kind, lives[i])
	}
	assert.Equal(t, InTheWay, objs[0].Action, "no controller reference: in the way by itself")
	TakeOverMountedClaims(objs, lives)
	assert.Equal(t, TakeOver, objs[0].Action, "the CR's Deployment mounts it")
	assert.Contains(t, objs[0].Note, "the CR's Deployment a mounts it")
	assert.Equal(t, InTheWay, objs[2].Action, "a claim nothing of the CR mounts stays in the way")

	// A workload that is not the CR's mounting it proves nothing.
	objs[0].Action = InTheWay
	lives[1] = object("a", nil, nil, "")
	_ = unstructured.SetNestedSlice(lives[1].Object, []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "a-pvc"}}}, "spec", "template", "spec", "volumes")
	objs[1].Action, _ = Classify(own, "Deployment", lives[1])
	TakeOverMountedClaims(objs, lives)
	assert.Equal(t, InTheWay, objs[0].Action)
}

func TestClearExclusiveDropsRollingUpdateBesideRecreate(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"strategy": map[string]any{"type": "Recreate"}}}}
	ClearExclusive(u)
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "strategy", "rollingUpdate")
	assert.True(t, found)
	assert.Nil(t, v, "null in a merge patch removes the live parameters")

	rolling := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"strategy": map[string]any{"type": "RollingUpdate"}}}}
	ClearExclusive(rolling)
	_, found, _ = unstructured.NestedFieldNoCopy(rolling.Object, "spec", "strategy", "rollingUpdate")
	assert.False(t, found, "a RollingUpdate render keeps the live parameters it does not name")
}

func TestJobsInFlightAreNotHandedOver(t *testing.T) {
	for _, s := range []string{"", "New", "Complete"} {
		assert.Empty(t, JobInFlight(s), s)
	}
	for _, s := range []string{"Scheduled", "Running", "Suspended", "Cancelled"} {
		assert.Contains(t, JobInFlight(s), "let it end before the switch", s)
	}
}
