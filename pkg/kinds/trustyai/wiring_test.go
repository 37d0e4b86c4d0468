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
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
)

func modelMesh(env ...corev1.EnvVar) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Namespace, d.UID = "modelmesh-serving-ovms", "team-a", "uid-1"
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "rest-proxy"}, {Name: "mm", Env: env}}
	return d
}

// owned is a managedFields entry owning the given fieldsV1 JSON.
func owned(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: fieldsV1(fields)}
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

func TestProcessorTokens(t *testing.T) {
	const url = "https://tas.team-a.svc/consumer/kserve/v2"
	assert.Equal(t, url, appendToken("", url), "appended to nothing")
	assert.Equal(t, url, appendToken("  ", url), "a blank list is nothing")
	assert.Equal(t, "http://other "+url, appendToken("http://other", url), "appended to another's list")
	assert.Equal(t, "http://other "+url, appendToken("http://other "+url, url), "exactly once")
	assert.Equal(t, url+"  http://other", appendToken(url+"  http://other", url), "a list that has it is not rewritten")
	assert.Equal(t, "http://a "+url, appendToken("http://a ", url), "a trailing space is the separator")
	assert.Equal(t, "http://other "+url+"x "+url, appendToken("http://other "+url+"x", url), "a longer entry is not the URL")

	assert.True(t, hasToken("a "+url+"\tb", url))
	assert.False(t, hasToken("a "+url+"/x", url))
	for _, tc := range []struct{ list, want string }{
		{"http://other " + url, "http://other"},
		{url + " http://other", "http://other"},
		{"http://a  " + url + " http://b", "http://a  http://b"},
		{url, ""},
		{"http://other", "http://other"},
		{url + "x http://other", url + "x http://other"},
		{"  http://odd\tspacing  ", "  http://odd\tspacing  "},
		{url + " " + url, ""},
	} {
		assert.Equal(t, tc.want, withoutTokens(tc.list, url), "%q", tc.list)
	}
	for _, other := range []string{"http://other", " http://a  http://b\t", "http://a " + url + "x"} {
		assert.Equal(t, other, withoutTokens(appendToken(other, url), url), "taking out what was appended gives back %q exactly", other)
	}
	assert.Equal(t, "http://tas.team-a.svc/consumer/kserve/v2", otherSchemeURL(url))
	assert.Equal(t, url, otherSchemeURL("http://tas.team-a.svc/consumer/kserve/v2"))
}

func TestValueEditJSONPatch(t *testing.T) {
	raw, err := valueEdit{Container: 1, Env: 2, Old: "http://other", New: "http://other http://tas"}.jsonPatch("uid-1")
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"op":"test","path":"/metadata/uid","value":"uid-1"},
		{"op":"test","path":"/spec/template/spec/containers/1/name","value":"mm"},
		{"op":"test","path":"/spec/template/spec/containers/1/env/2/name","value":"MM_PAYLOAD_PROCESSORS"},
		{"op":"test","path":"/spec/template/spec/containers/1/env/2/value","value":"http://other"},
		{"op":"replace","path":"/spec/template/spec/containers/1/env/2/value","value":"http://other http://tas"}
	]`, string(raw), "the value alone changes, and only where it is as it was read")
}

func TestPlanModelMesh(t *testing.T) {
	cr := sample(t, nil)
	tlsWant := modelMeshWantOf(cr, platform.TLSCertManager)
	assert.Equal(t, modelMeshWant{URL: "https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2", Secret: "trustyaiservice-sample-internal", Volume: "trustyaiservice-sample-internal"}, tlsWant)
	plainWant := modelMeshWantOf(cr, platform.TLSNone)
	assert.Equal(t, modelMeshWant{URL: "http://trustyaiservice-sample.team-a.svc/consumer/kserve/v2"}, plainWant, "no certificate, no volume")

	// Nobody set the variable: applied, with the certificate.
	d := modelMesh()
	p := planModelMesh(d, tlsWant)
	require.Empty(t, p.problem)
	assert.False(t, p.done())
	assert.Nil(t, p.edit)
	assert.Equal(t, map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "modelmesh-serving-ovms", "namespace": "team-a", "uid": "uid-1"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{
				"name": "mm",
				"env": []any{
					map[string]any{"name": "MM_PAYLOAD_PROCESSORS", "value": tlsWant.URL},
					map[string]any{"name": "MM_TLS_KEY_CERT_PATH", "value": "/etc/trustyai/tls/tls.crt"},
				},
				"volumeMounts": []any{map[string]any{"name": "trustyaiservice-sample-internal", "mountPath": "/etc/trustyai/tls", "readOnly": true}},
			}},
			"volumes": []any{map[string]any{"name": "trustyaiservice-sample-internal", "secret": map[string]any{"secretName": "trustyaiservice-sample-internal"}}},
		}}},
	}, p.cfg.Object, "the processor and the certificate: nothing else")

	// As the apply leaves it: nothing to write.
	mm := &d.Spec.Template.Spec.Containers[1]
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: tlsWant.URL}, {Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"}}
	mm.VolumeMounts = []corev1.VolumeMount{{Name: tlsWant.Secret, MountPath: "/etc/trustyai/tls", ReadOnly: true}}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: tlsWant.Volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsWant.Secret}}}}
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessors)}
	assert.True(t, planModelMesh(d, tlsWant).done(), "a configured Deployment is not written again")

	// The wiring owns a certificate it no longer wants (TLS gone): written.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, ownedCertEnv)}
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: plainWant.URL}, {Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"}}
	p = planModelMesh(d, plainWant)
	assert.False(t, p.done(), "a stale field of the wiring's is given back")
	assert.NotContains(t, podSpecOf(p.cfg), "volumes")

	// The wiring alone owns the variable: its earlier URL is replaced, not kept.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessors)}
	mm.Env = []corev1.EnvVar{{Name: "MM_PAYLOAD_PROCESSORS", Value: plainWant.URL}}
	p = planModelMesh(d, tlsWant)
	assert.False(t, p.done())
	assert.Nil(t, p.edit)
	assert.Equal(t, tlsWant.URL, envOfCfg(p.cfg)[0].(map[string]any)["value"])

	// Another manager set the variable: the URL is appended by an edit of
	// the value alone, and the variable is left out of the apply.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned("kubectl-client-side-apply", ownedProcessors)}
	mm.Env = []corev1.EnvVar{{Name: "OTHER", Value: "1"}, {Name: "MM_PAYLOAD_PROCESSORS", Value: "http://other"}}
	p = planModelMesh(d, plainWant)
	assert.False(t, p.done())
	assert.True(t, p.shared)
	assert.Empty(t, p.ownedBy, "not a conflict: appended")
	assert.Equal(t, &valueEdit{Container: 1, Env: 1, Old: "http://other", New: "http://other " + plainWant.URL}, p.edit)
	assert.True(t, p.applyDone, "nothing of the wiring's to apply without TLS")
	assert.Nil(t, envOfCfg(p.cfg), "the variable is not in the apply")
	mm.Env[1].Value = "http://other " + plainWant.URL
	assert.True(t, planModelMesh(d, plainWant).done(), "appended once: nothing to write")

	// A value nobody owns (from before managed fields) is another's too.
	d.ManagedFields = nil
	mm.Env[1].Value = "http://other"
	assert.Equal(t, "http://other "+plainWant.URL, planModelMesh(d, plainWant).edit.New)

	// The wiring applied the variable before another manager set its value:
	// the entry (its name alone) stays in the apply, which would otherwise
	// remove the entry and the other's value with it.
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, ownedProcessorsName), owned("modelmesh-controller", ownedProcessorsValue)}
	p = planModelMesh(d, tlsWant)
	require.NotNil(t, p.edit)
	assert.Equal(t, map[string]any{"name": "MM_PAYLOAD_PROCESSORS"}, envOfCfg(p.cfg)[0], "the entry's name, never its value")
	assert.Equal(t, []any{map[string]any{"name": "MM_PAYLOAD_PROCESSORS"}}, envOfCfg(releaseConfig(d)), "and in the give-back")
	d.ManagedFields = d.ManagedFields[:1]
	assert.NotContains(t, releaseConfig(d).Object, "spec", "the wiring's alone: the give-back applies nothing")

	// The value is as the wiring's edit left it: its http URL gives way to
	// the https one; another's entries stay.
	appended := owned(AppendManager, ownedProcessorsValue)
	appended.Operation = metav1.ManagedFieldsOperationUpdate
	d.ManagedFields = []metav1.ManagedFieldsEntry{appended}
	mm.Env[1].Value = "http://other " + plainWant.URL
	assert.Equal(t, "http://other "+tlsWant.URL, planModelMesh(d, tlsWant).edit.New)
	assert.Equal(t, &valueEdit{Container: 1, Env: 1, Old: "http://other " + plainWant.URL, New: "http://other"}, appendedEdit(d, []string{plainWant.URL, tlsWant.URL}), "on delete: the URL out, the rest as it was")
	d.ManagedFields = []metav1.ManagedFieldsEntry{owned("modelmesh-controller", ownedProcessors)}
	assert.Nil(t, appendedEdit(d, []string{plainWant.URL}), "a list another manager wrote since (ModelMesh's payloadProcessors naming the URL) is theirs")

	assert.Contains(t, planModelMesh(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "odd"}}, tlsWant).problem, "ModelMesh Deployment odd has no container mm")
}

// podSpecOf is the pod spec of an apply configuration.
func podSpecOf(cfg *unstructured.Unstructured) map[string]any {
	spec, _, _ := unstructured.NestedMap(cfg.Object, "spec", "template", "spec")
	return spec
}

// envOfCfg is the mm container's env of an apply configuration; nil without.
func envOfCfg(cfg *unstructured.Unstructured) []any {
	cs, _ := podSpecOf(cfg)["containers"].([]any)
	if len(cs) == 0 {
		return nil
	}
	env, _ := cs[0].(map[string]any)["env"].([]any)
	return env
}

const (
	ownedCertEnv         = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{".":{},"f:env":{"k:{\"name\":\"MM_TLS_KEY_CERT_PATH\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}}}}}}}`
	ownedProcessorsName  = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{".":{},"f:env":{"k:{\"name\":\"MM_PAYLOAD_PROCESSORS\"}":{".":{},"f:name":{}}},"f:name":{}}}}}}}`
	ownedProcessorsValue = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{"f:env":{"k:{\"name\":\"MM_PAYLOAD_PROCESSORS\"}":{"f:value":{}}}}}}}}}`
)

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
	assert.Equal(t, "http://trustyaiservice-sample.team-a.svc.cluster.local", loggerURL(cr, platform.TLSNone), "no certificate: http")
	assert.Equal(t, "https://trustyaiservice-sample.team-a.svc.cluster.local", loggerURL(cr, platform.TLSCertManager))
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

// Budgets are one service's to one model server: a successor that takes a
// namespace over has a budget of its own (TestTrustyAIServiceModelMeshWiring's
// handover once spent the first service's on the second's writes).
func TestWriteBudgetPerService(t *testing.T) {
	var b writeBudget
	now := time.Unix(1_000_000, 0)
	first := &trustyv1.TrustyAIService{ObjectMeta: metav1.ObjectMeta{UID: "first"}}
	second := &trustyv1.TrustyAIService{ObjectMeta: metav1.ObjectMeta{UID: "second"}}
	for i := 0; i < wiringBudget; i++ {
		b.record(budgetKey(first, "server"), now)
	}
	assert.False(t, b.allows(budgetKey(first, "server"), now))
	assert.True(t, b.allows(budgetKey(second, "server"), now))
}
