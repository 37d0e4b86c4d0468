package trustyai

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
)

func modelMesh(env ...corev1.EnvVar) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Namespace, d.UID = "modelmesh-serving-ovms", "team-a", "uid-1"
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "rest-proxy"}, {Name: "mm", Env: env}}
	return d
}

// owned is a managedFields entry owning the given fieldsV1 JSON.
func owned(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

const ownedProcessors = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{".":{},"f:env":{"k:{\"name\":\"MM_PAYLOAD_PROCESSORS\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}}}}}}}`

func TestOwnedPathsNotation(t *testing.T) {
	paths := ownedPaths([]metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessors), owned("other", `{"f:spec":{"f:replicas":{}}}`)}, true)
	assert.True(t, paths[pathProcessors+".value"], "the wiring's path notation is structured-merge-diff's: %v", paths)
	assert.True(t, paths[pathMM])
	assert.False(t, paths[".spec.replicas"], "another manager's field is not the wiring's")
	assert.True(t, ownedPaths([]metav1.ManagedFieldsEntry{owned("other", `{"f:spec":{"f:replicas":{}}}`)}, false)[".spec.replicas"])
	assert.Empty(t, ownedPaths([]metav1.ManagedFieldsEntry{owned(FieldManager, `not json`)}, true), "unparsable fields own nothing")
}

func TestProcessors(t *testing.T) {
	const url = "https://tas.team-a.svc/consumer/kserve/v2"
	assert.Equal(t, url, processors("", url, false), "appended to nothing")
	assert.Equal(t, "http://other "+url, processors("http://other", url, false), "appended to another's list")
	assert.Equal(t, "http://other "+url, processors("http://other "+url, url, false), "exactly once")
	assert.Equal(t, url+"  http://other", processors(url+"  http://other", url, false), "a list that has it is not rewritten")
	assert.Equal(t, url, processors("http://tas.team-a.svc/consumer/kserve/v2", url, true), "the wiring's own earlier URL is replaced")
}

func TestPlanModelMesh(t *testing.T) {
	cr := sample(t, nil)
	tlsWant := modelMeshWantOf(cr, tlsCertManager)
	assert.Equal(t, modelMeshWant{URL: "https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2", Secret: "trustyaiservice-sample-internal", Volume: "trustyaiservice-sample-internal"}, tlsWant)
	plainWant := modelMeshWantOf(cr, tlsNone)
	assert.Equal(t, modelMeshWant{URL: "http://trustyaiservice-sample.team-a.svc/consumer/kserve/v2"}, plainWant, "no certificate, no volume")

	d := modelMesh(corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://other"})
	cfg, done, problem, ownedBy := planModelMesh(d, tlsWant)
	require.Empty(t, problem)
	assert.False(t, done)
	assert.Empty(t, ownedBy, "nobody owns the variable (no managedFields)")
	assert.Equal(t, map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "modelmesh-serving-ovms", "namespace": "team-a", "uid": "uid-1"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{
				"name": "mm",
				"env": []any{
					map[string]any{"name": "MM_PAYLOAD_PROCESSORS", "value": "http://other " + tlsWant.URL},
					map[string]any{"name": "MM_TLS_KEY_CERT_PATH", "value": "/etc/trustyai/tls/tls.crt"},
				},
				"volumeMounts": []any{map[string]any{"name": "trustyaiservice-sample-internal", "mountPath": "/etc/trustyai/tls", "readOnly": true}},
			}},
			"volumes": []any{map[string]any{"name": "trustyaiservice-sample-internal", "secret": map[string]any{"secretName": "trustyaiservice-sample-internal"}}},
		}}},
	}, cfg.Object, "the processor appended to the list, the certificate mounted: nothing else")

	// As the apply leaves it: nothing to write.
	mm := &d.Spec.Template.Spec.Containers[1]
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://other " + tlsWant.URL}, {Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"}}
	mm.VolumeMounts = []corev1.VolumeMount{{Name: tlsWant.Secret, MountPath: "/etc/trustyai/tls", ReadOnly: true}}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: tlsWant.Volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsWant.Secret}}}}
	_, done, _, _ = planModelMesh(d, tlsWant)
	assert.True(t, done, "a configured Deployment is not written again")

	// The wiring owns a certificate it no longer wants (TLS gone): written.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{".":{},"f:env":{"k:{\"name\":\"MM_TLS_KEY_CERT_PATH\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}}}}}}}`)}
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: plainWant.URL}, {Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"}}
	cfg, done, _, _ = planModelMesh(d, plainWant)
	assert.False(t, done, "a stale field of the wiring's is given back")
	c := cfg.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	assert.NotContains(t, c, "volumes")
	assert.Equal(t, []any{map[string]any{"name": "MM_PAYLOAD_PROCESSORS", "value": plainWant.URL}}, c["containers"].([]any)[0].(map[string]any)["env"])

	// The wiring alone owns the variable: its earlier URL is replaced, not kept.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessors)}
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: plainWant.URL}}
	cfg, done, _, _ = planModelMesh(d, tlsWant)
	assert.False(t, done)
	env := cfg.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"].([]any)
	assert.Equal(t, tlsWant.URL, env[0].(map[string]any)["value"])

	// ModelMesh owns the variable: reported without a write.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned("modelmesh-controller", ownedProcessors)}
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://other"}}
	_, done, _, ownedBy = planModelMesh(d, plainWant)
	assert.False(t, done)
	assert.Equal(t, []string{"modelmesh-controller"}, ownedBy)
	mm.Env[0].Value = "http://other " + plainWant.URL
	_, done, _, ownedBy = planModelMesh(d, plainWant)
	assert.True(t, done, "the owner added the processor: nothing to write")
	assert.Empty(t, ownedBy)

	_, _, problem, _ = planModelMesh(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "odd"}}, tlsWant)
	assert.Contains(t, problem, "ModelMesh Deployment odd has no container mm")
}

func TestWriteBudget(t *testing.T) {
	var b writeBudget
	now := time.Unix(1_000_000, 0)
	for i := 0; i < wiringBudget; i++ {
		at := now.Add(time.Duration(i) * time.Minute)
		assert.True(t, b.allows("a", at), "write %d", i+1)
		b.record("a", at)
	}
	assert.False(t, b.allows("a", now.Add(3*time.Minute)), "the budget is spent within the window")
	assert.True(t, b.allows("b", now.Add(3*time.Minute)), "budgets are per object")
	assert.True(t, b.allows("a", now.Add(wiringWindow)), "the first write left the window")
	b.record("a", now.Add(wiringWindow))
	assert.False(t, b.allows("a", now.Add(wiringWindow)))
	b.allows("c", now.Add(3*wiringWindow))
	assert.Empty(t, b.writes, "objects without recent writes are forgotten")
}

func TestOtherOwners(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessors), owned("b", ownedProcessors), owned("a", ownedProcessors), owned("a", ownedProcessors), owned("c", `{"f:spec":{"f:replicas":{}}}`)}
	assert.Equal(t, []string{"a", "b"}, otherOwners(fields, pathProcessors+".value"), "sorted, once each, the wiring's own left out")
	assert.Empty(t, otherOwners(fields, ".spec.paused"))
	assert.Equal(t, `"a", "b"`, quoted([]string{"a", "b"}))
}

func TestWirerOf(t *testing.T) {
	at := func(name string, sec int64) trustyv1.TrustyAIService {
		t := trustyv1.TrustyAIService{}
		t.Name, t.CreationTimestamp = name, metav1.Unix(sec, 0)
		return t
	}
	assert.Equal(t, "", wirerOf(nil))
	assert.Equal(t, "old", wirerOf([]trustyv1.TrustyAIService{at("young", 20), at("old", 10)}), "the oldest wires")
	assert.Equal(t, "a", wirerOf([]trustyv1.TrustyAIService{at("b", 10), at("a", 10)}), "then the first by name")
}

func TestSummarize(t *testing.T) {
	assert.Equal(t, ReasonAPINotFound, summarize(nil, false).reason)
	assert.Equal(t, "InferenceServicesNotFound", summarize(nil, true).reason)
	ok := summarize([]outcome{{kind: "InferenceService", name: "a"}, {kind: "ModelMesh Deployment", name: "mm"}}, true)
	assert.True(t, ok.ok)
	assert.Equal(t, "InferenceServicesFound", ok.reason)
	assert.Equal(t, "InferenceService a, ModelMesh Deployment mm send their inferences to the service", ok.message)
	w := summarize([]outcome{{kind: "InferenceService", name: "a"}, {kind: "InferenceService", name: "b", state: ownedElsewhere, detail: "b is taken"}, {kind: "InferenceService", name: "c", state: reverted, detail: "c is reverted"}}, true)
	assert.Equal(t, ReasonRevertedByAnother, w.reason, "the worst state wins")
	assert.False(t, w.ok)
	assert.Equal(t, "b is taken; c is reverted", w.message)
	u := summarize([]outcome{{kind: "ModelMesh Deployment", name: "odd", state: unfit, detail: "no mm"}}, false)
	assert.Equal(t, "InferenceServicesNotFound", u.reason)
	assert.Equal(t, "no mm", u.message)
}

func TestLastWriter(t *testing.T) {
	at := func(m string, sec int64) metav1.ManagedFieldsEntry {
		tm := metav1.Unix(sec, 0)
		return metav1.ManagedFieldsEntry{Manager: m, Time: &tm}
	}
	assert.Equal(t, "kserve", lastWriter([]metav1.ManagedFieldsEntry{at("kubectl", 1), at(FieldManager, 9), at("kserve", 5)}), "the wiring's own writes are not the culprit")
	assert.Equal(t, "another controller", lastWriter(nil))
	assert.Contains(t, revertedDetail("InferenceService", "m", []metav1.ManagedFieldsEntry{at("kserve", 5)}), `InferenceService m: "kserve" removed what the operator applied 3 times within 10m0s`)
}

func TestWiringHelpers(t *testing.T) {
	cr := sample(t, nil)
	assert.Equal(t, "http://trustyaiservice-sample.team-a.svc.cluster.local", loggerURL(cr, tlsNone), "no certificate: http")
	assert.Equal(t, "https://trustyaiservice-sample.team-a.svc.cluster.local", loggerURL(cr, tlsCertManager))
	isvc := func(mode string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if mode != "" {
			u.SetAnnotations(map[string]string{annotationDeploymentMode: mode})
		}
		return u
	}
	assert.True(t, eligible(isvc("RawDeployment"), false))
	assert.True(t, eligible(isvc("Standard"), false))
	assert.False(t, eligible(isvc("Serverless"), false), "Serverless only with kServeServerless")
	assert.False(t, eligible(isvc(""), false))
	assert.True(t, eligible(isvc("Serverless"), true))

	u := isvc("RawDeployment")
	u.SetName("m")
	u.SetNamespace("team-a")
	u.SetUID("uid-m")
	applied := applyConfig(u, "http://x")
	assert.Equal(t, map[string]any{
		"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
		"metadata": map[string]any{"name": "m", "namespace": "team-a", "uid": "uid-m"},
		"spec":     map[string]any{"predictor": map[string]any{"logger": map[string]any{"mode": "all", "url": "http://x"}}},
	}, applied.Object, "the wiring applies the logger and nothing else")
	assert.NotContains(t, applyConfig(u, "").Object, "spec", "the undo applies nothing, which gives the field back")
	assert.False(t, ownsFields(u))
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager}})
	assert.True(t, ownsFields(u))
}

func TestVanished(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	// The API server's words (pinned against a real one in
	// test/integration's TestApplyWithUIDNeverCreates).
	assert.True(t, vanished(apierrors.NewConflict(gr, "m", errors.New("uid mismatch: the provided object specified uid x, and no existing object was found"))))
	assert.True(t, vanished(apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "m", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "field is immutable")})), "replaced by another of its name")
	assert.False(t, vanished(apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "m", field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), "x", "bad")})))
	assert.False(t, vanished(apierrors.NewConflict(gr, "m", errors.New(`Apply failed with 1 conflict: conflict with "kubectl": .spec.predictor.logger.url`))), "a field conflict is another manager's")
	assert.False(t, vanished(apierrors.NewNotFound(gr, "m")))
}
