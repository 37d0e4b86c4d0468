package trustyai

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// applied is what a fake client was asked to apply.
type applied struct {
	objs []*unstructured.Unstructured
	// patches are the JSON patches (the edits of another manager's
	// MM_PAYLOAD_PROCESSORS).
	patches []string
}

// wiringKind is a Kind on a fake cluster holding objs whose applies are
// recorded (and do nothing), with a recorder of its events.
func wiringKind(t *testing.T, objs ...client.Object) (*Kind, *applied, *record.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, appsv1.AddToScheme(scheme))
	require.NoError(t, corev1.AddToScheme(scheme))
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	mapper.Add(platform.InferenceService, meta.RESTScopeNamespace)
	got := &applied{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).WithReturnManagedFields().WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
			if patch.Type() == types.JSONPatchType {
				raw, err := patch.Data(obj)
				require.NoError(t, err)
				got.patches = append(got.patches, string(raw))
				return nil
			}
			require.Equal(t, client.Apply.Type(), patch.Type(), "the wiring applies, or edits another's list") //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
			u, ok := obj.(*unstructured.Unstructured)
			require.True(t, ok)
			got.objs = append(got.objs, u.DeepCopy())
			return nil
		},
	}).Build()
	rec := record.NewFakeRecorder(20)
	return &Kind{Deps: release.Deps{Client: c, APIReader: c, Recorder: rec}}, got, rec
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Upstream mounts Secret <name>-internal at /etc/trustyai/tls and sets
// MM_TLS_KEY_CERT_PATH=/etc/trustyai/tls/tls.crt (controllers/tas/
// certificates.go, inference_services.go): the wiring does the same, so a
// Deployment upstream wired is as wanted (nothing written, nothing to
// conflict with), and one the operator wired at its earlier path moves.
func TestModelMeshCertificateAtUpstreamsPath(t *testing.T) {
	cr := sample(t, nil)
	want := modelMeshWantOf(cr, platform.TLSCertManager)
	mm := planModelMesh(modelMesh(), want).cfg.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	assert.Contains(t, mm["env"], map[string]any{"name": "MM_TLS_KEY_CERT_PATH", "value": "/etc/trustyai/tls/tls.crt"})
	assert.Equal(t, []any{map[string]any{"name": "trustyaiservice-sample-internal", "mountPath": "/etc/trustyai/tls", "readOnly": true}}, mm["volumeMounts"])

	// As upstream's Update leaves it (it mounts the Secret in every container).
	const upstreamFields = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{"f:env":{"k:{\"name\":\"MM_PAYLOAD_PROCESSORS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"MM_TLS_KEY_CERT_PATH\"}":{".":{},"f:name":{},"f:value":{}}},"f:volumeMounts":{"k:{\"mountPath\":\"/etc/trustyai/tls\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}},"f:volumes":{"k:{\"name\":\"trustyaiservice-sample-internal\"}":{".":{},"f:name":{},"f:secret":{"f:secretName":{}}}}}}}}`
	byUpstream := modelMesh(corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: "https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2"}, corev1.EnvVar{Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/trustyai/tls/tls.crt"})
	internal := corev1.VolumeMount{Name: "trustyaiservice-sample-internal", MountPath: "/etc/trustyai/tls", ReadOnly: true}
	for i := range byUpstream.Spec.Template.Spec.Containers {
		byUpstream.Spec.Template.Spec.Containers[i].VolumeMounts = []corev1.VolumeMount{internal}
	}
	byUpstream.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "trustyaiservice-sample-internal", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "trustyaiservice-sample-internal"}}}}
	byUpstream.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: fieldsV1(upstreamFields)}}
	p := planModelMesh(byUpstream, want)
	assert.Empty(t, p.problem)
	assert.Empty(t, p.ownedBy, "nothing upstream set is changed")
	assert.True(t, p.done(), "a Deployment upstream wired is not written")

	// Wired by the operator at /etc/tls/trustyai before: moved, nothing else.
	const earlierFields = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"mm\"}":{".":{},"f:env":{"k:{\"name\":\"MM_PAYLOAD_PROCESSORS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"MM_TLS_KEY_CERT_PATH\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{},"f:volumeMounts":{"k:{\"mountPath\":\"/etc/tls/trustyai\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}},"f:volumes":{"k:{\"name\":\"trustyaiservice-sample-internal\"}":{".":{},"f:name":{},"f:secret":{"f:secretName":{}}}}}}}}`
	earlier := modelMesh(corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: want.URL}, corev1.EnvVar{Name: "MM_TLS_KEY_CERT_PATH", Value: "/etc/tls/trustyai/tls.crt"})
	earlier.Spec.Template.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "trustyaiservice-sample-internal", MountPath: "/etc/tls/trustyai", ReadOnly: true}}
	earlier.Spec.Template.Spec.Volumes = byUpstream.Spec.Template.Spec.Volumes
	earlier.ManagedFields = []metav1.ManagedFieldsEntry{owned(FieldManager, earlierFields)}
	p = planModelMesh(earlier, want)
	assert.False(t, p.done(), "the earlier path is moved")
	assert.Empty(t, p.ownedBy)
	mm = p.cfg.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{map[string]any{"name": "trustyaiservice-sample-internal", "mountPath": "/etc/trustyai/tls", "readOnly": true}}, mm["volumeMounts"], "the apply names the new mount only: the earlier one, the wiring's alone, goes")
	assert.Contains(t, mm["env"], map[string]any{"name": "MM_TLS_KEY_CERT_PATH", "value": "/etc/trustyai/tls/tls.crt"})
}

// Each write of the wiring is an event of upstream's reason,
// InferenceServiceConfigured, for ModelMesh Deployments as for
// InferenceServices.
func TestWiringEventsHaveUpstreamsReason(t *testing.T) {
	cr := sample(t, nil)
	d := modelMesh()
	d.Labels = ModelMeshLabels
	isvc := inferenceService("raw", "RawDeployment")
	k, got, rec := wiringKind(t, d, isvc)

	outs, err := k.wireModelMesh(context.Background(), cr, platform.TLSCertManager)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, configured, outs[0].state)
	require.Len(t, got.objs, 1)
	assert.Equal(t, []string{"Normal InferenceServiceConfigured ModelMesh Deployment modelmesh-serving-ovms sends its payloads to https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2"}, events(rec))

	outs, err = k.wireInferenceServices(context.Background(), cr, loggerURL(cr, platform.TLSCertManager), false)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, []string{"Normal InferenceServiceConfigured InferenceService raw logs its inferences to https://trustyaiservice-sample.team-a.svc.cluster.local"}, events(rec))

	// Another manager set the variable: one event says the URL was appended
	// to its list, which keeps its entries.
	d = modelMesh(corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://other"})
	d.Labels = ModelMeshLabels
	byKubectl := owned("kubectl-client-side-apply", ownedProcessors)
	byKubectl.APIVersion, byKubectl.Operation = "apps/v1", metav1.ManagedFieldsOperationUpdate
	d.ManagedFields = []metav1.ManagedFieldsEntry{byKubectl}
	k, got, rec = wiringKind(t, d)
	outs, err = k.wireModelMesh(context.Background(), cr, platform.TLSCertManager)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, configured, outs[0].state)
	assert.Contains(t, outs[0].detail, "appended to the MM_PAYLOAD_PROCESSORS that another manager set")
	require.Len(t, got.patches, 1)
	assert.Contains(t, got.patches[0], `{"op":"replace","path":"/spec/template/spec/containers/1/env/0/value","value":"http://other https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2"}`)
	require.Len(t, got.objs, 1, "the certificate is applied")
	assert.Equal(t, []any{map[string]any{"name": "MM_TLS_KEY_CERT_PATH", "value": "/etc/trustyai/tls/tls.crt"}}, envOfCfg(got.objs[0]), "the other's variable is not in the apply")
	assert.Equal(t, []string{`Normal InferenceServiceConfigured ModelMesh Deployment modelmesh-serving-ovms sends its payloads to https://trustyaiservice-sample.team-a.svc/consumer/kserve/v2: appended to the MM_PAYLOAD_PROCESSORS that "kubectl-client-side-apply" set, which keeps its entries`}, events(rec))
}

func inferenceService(name, mode string, managers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(platform.InferenceService)
	u.SetNamespace("team-a")
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	if mode != "" {
		u.SetAnnotations(map[string]string{annotationDeploymentMode: mode})
	}
	var fields []metav1.ManagedFieldsEntry
	for _, m := range managers {
		fields = append(fields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "serving.kserve.io/v1beta1", FieldsType: "FieldsV1", FieldsV1: fieldsV1(`{"f:spec":{"f:predictor":{"f:logger":{"f:mode":{},"f:url":{}}}}}`)})
	}
	u.SetManagedFields(fields)
	return u
}

// Upstream's handleInferenceServices: RawDeployment and Standard get the
// logger always, Serverless and Knative with kServeServerless only, and an
// InferenceService of any other mode (ModelMesh's, an unknown one) or
// without the annotation is skipped, whatever kServeServerless says (what
// the wiring applied to one before is given back).
func TestKServeLoggerOnlyForUpstreamsModes(t *testing.T) {
	isvc := func(mode string) *unstructured.Unstructured { return inferenceService("m", mode) }
	for mode, want := range map[string][2]bool{ // without, with kServeServerless
		"RawDeployment": {true, true},
		"Standard":      {true, true},
		"Serverless":    {false, true},
		"Knative":       {false, true},
		"":              {false, false},
		"ModelMesh":     {false, false},
		"rawdeployment": {false, false},
		"Serverless ":   {false, false}, //nolint:gocritic // upstream compares the mode exactly: a trailing blank is another mode
	} {
		assert.Equal(t, want[0], eligible(isvc(mode), false), "%q without kServeServerless", mode)
		assert.Equal(t, want[1], eligible(isvc(mode), true), "%q with kServeServerless", mode)
	}

	// On a cluster: with kServeServerless, the logger goes to the RawDeployment,
	// Standard, Serverless and Knative ones; the one without the annotation,
	// which the wiring had configured, is given back; ModelMesh's is left be.
	cr := sample(t, nil)
	k, got, _ := wiringKind(t,
		inferenceService("a-raw", "RawDeployment"), inferenceService("b-standard", "Standard"),
		inferenceService("c-serverless", "Serverless"), inferenceService("d-knative", "Knative"),
		inferenceService("e-none", "", FieldManager), inferenceService("f-modelmesh", "ModelMesh"),
		inferenceService("g-none-untouched", ""),
	)
	url := loggerURL(cr, platform.TLSCertManager)
	outs, err := k.wireInferenceServices(context.Background(), cr, url, true)
	require.NoError(t, err)
	var wired []string
	for _, o := range outs {
		wired = append(wired, o.name)
	}
	assert.Equal(t, []string{"a-raw", "b-standard", "c-serverless", "d-knative"}, wired)
	applies := map[string]bool{}
	for _, u := range got.objs {
		_, hasLogger, _ := unstructured.NestedMap(u.Object, "spec", "predictor", "logger")
		applies[u.GetName()] = hasLogger
	}
	assert.Equal(t, map[string]bool{"a-raw": true, "b-standard": true, "c-serverless": true, "d-knative": true, "e-none": false}, applies, "e-none is given back (an apply of nothing)")
}

// PVC mode and a migration run 1 pod whatever spec.replicas says (one pod
// mounts a ReadWriteOnce claim; upstream always runs 1); DATABASE mode runs
// spec.replicas. The chart, the Deployment condition and ReplicasHonored
// agree.
func TestReplicasWithAClaim(t *testing.T) {
	in := inputs(defaults, release.NewCapabilities())
	migration := func(cr *trustyv1.TrustyAIService) {
		cr.Spec.Storage.Format, cr.Spec.Storage.DatabaseConfigurations = trustyv1.StorageDatabase, "db"
	}
	database := func(cr *trustyv1.TrustyAIService) {
		migration(cr)
		cr.Spec.Storage.Folder, cr.Spec.Storage.Size, cr.Spec.Data = "", "", trustyv1.DataSpec{}
	}
	for _, tc := range []struct {
		name     string
		mode     func(*trustyv1.TrustyAIService)
		replicas *int32
		pods     int32
		ignored  string // in ReplicasHonored's message; "" for no condition
	}{
		{"PVC, unset", nil, nil, 1, ""},
		{"PVC, 1", nil, ptr.To[int32](1), 1, ""},
		{"PVC, 3", nil, ptr.To[int32](3), 1, "spec.replicas is 3, but PVC mode runs 1 pod"},
		{"PVC, 0", nil, ptr.To[int32](0), 1, "spec.replicas is 0, but PVC mode runs 1 pod"},
		{"migration, 2", migration, ptr.To[int32](2), 1, "spec.replicas is 2, but a migration runs 1 pod"},
		{"migration, unset", migration, nil, 1, ""},
		{"DATABASE, 3", database, ptr.To[int32](3), 3, ""},
		{"DATABASE, 0", database, ptr.To[int32](0), 0, ""},
		{"DATABASE, unset", database, nil, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := sample(t, func(cr *trustyv1.TrustyAIService) {
				if tc.mode != nil {
					tc.mode(cr)
				}
				cr.Spec.Replicas = tc.replicas
			})
			r := renderValues(t, cr, in)
			assert.Equal(t, tc.pods, *r.deployment.Spec.Replicas, "the Deployment's replicas")
			assert.Equal(t, tc.pods, podReplicas(cr))

			o := observed{Observed: status.Observed{Generation: 2, Applied: true, Now: t0}, Replicas: podReplicas(cr), ReplicasIgnored: replicasIgnored(cr), UsesClaim: usesClaim(cr), Deployment: readyDeployment(tc.pods), Ingress: true}
			if o.UsesClaim {
				q := boundClaim("1Gi").Spec.Resources.Requests[corev1.ResourceStorage]
				o.Requested, o.Claim = &q, boundClaim("1Gi")
			}
			o.Database = cr.Spec.Storage.Format == trustyv1.StorageDatabase
			st := computeStatus(trustyv1.TrustyAIServiceStatus{}, o)
			assert.Equal(t, trustyv1.PhaseReady, st.Phase, "1 pod of 1 is ready: the service runs")
			c := find(st.Conditions, TypeReplicasHonored)
			if tc.ignored == "" {
				assert.Nil(t, c)
			} else if assert.NotNil(t, c) {
				assert.Equal(t, metav1.ConditionFalse, c.Status)
				assert.Equal(t, ReasonReplicasIgnored, c.Reason)
				assert.Contains(t, c.Message, tc.ignored)
				assert.Contains(t, c.Message, "set spec.replicas to 1 or remove it")
				if tc.mode == nil {
					assert.Contains(t, c.Message, "use DATABASE mode (spec.storage.format: DATABASE) to run several pods")
				} else {
					assert.Contains(t, c.Message, "remove spec.storage.folder and spec.data.filename to run several pods")
				}
			}
			assert.Equal(t, st, computeStatus(st, o), "stable: an unchanged CR writes nothing")

			// Fixed: the condition goes.
			cr.Spec.Replicas = nil
			o.ReplicasIgnored = replicasIgnored(cr)
			assert.Nil(t, find(computeStatus(st, o).Conditions, TypeReplicasHonored))
		})
	}
	assert.Contains(t, Meta().WarningConditions, TypeReplicasHonored, "its turn to False is a Warning event")
}

// fieldsV1 is managed fields as the API server stores them.
func fieldsV1(s string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	f.SetRawString(s)
	return f
}
