package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
)

// modelMeshDeployment is a Deployment as ModelMesh Serving makes one: its
// label, a rest-proxy and an mm container.
func modelMeshDeployment(ns, name string, env ...corev1.EnvVar) *appsv1.Deployment {
	labels := map[string]string{"modelmesh-service": "modelmesh-serving", "name": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "rest-proxy", Image: "kserve/rest-proxy"},
					{Name: "mm", Image: "kserve/modelmesh", Env: env},
				}},
			},
		},
	}
}

// processorsOf is MM_PAYLOAD_PROCESSORS of the mm container; "-" when unset.
func processorsOf(t *testing.T, ns, name string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, get(ns, name, d))
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if c.Name == "mm" && e.Name == "MM_PAYLOAD_PROCESSORS" {
				return e.Value
			}
		}
	}
	return "-"
}

func waitProcessors(t *testing.T, ns, name, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s's MM_PAYLOAD_PROCESSORS %q", name, want), func() error {
		if got := processorsOf(t, ns, name); got != want {
			// What the services say, for a failure's message.
			var said []string
			list := &trustyv1.TrustyAIServiceList{}
			_ = k8s.List(context.Background(), list, client.InNamespace(ns))
			for i := range list.Items {
				if c := tasCondition(&list.Items[i], "InferenceServicesPresent"); c != nil {
					said = append(said, fmt.Sprintf("%s: %s %s", list.Items[i].Name, c.Reason, c.Message))
				}
			}
			return fmt.Errorf("MM_PAYLOAD_PROCESSORS %q; %v", got, said)
		}
		return nil
	})
}

func wiringOwner(d *appsv1.Deployment) bool {
	for _, m := range d.ManagedFields {
		if m.Manager == "ai-stack-operator-trustyai" {
			return true
		}
	}
	return false
}

// ModelMesh Deployments of the namespace, there before the service or made
// later (the labelled watch), send their payloads to it: the processor
// appended once to MM_PAYLOAD_PROCESSORS by server-side apply. A variable
// another manager owns is not forced. A second service in the namespace does
// not fight the first; it takes over when the first is deleted, and the
// last one's deletion gives back every field the wiring applied.
func TestTrustyAIServiceModelMeshWiring(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, modelMeshDeployment(ns, "modelmesh-serving-ovms")))
	require.NoError(t, k8s.Create(ctx, modelMeshDeployment(ns, "modelmesh-serving-taken", corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://elsewhere"})))
	unlabelled := modelMeshDeployment(ns, "plain")
	unlabelled.Labels = map[string]string{"name": "plain"}
	require.NoError(t, k8s.Create(ctx, unlabelled))

	require.NoError(t, k8s.Create(ctx, newTAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	waitProcessors(t, ns, "modelmesh-serving-ovms", url)
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionFalse, "FieldOwnedElsewhere")
	msg := tasCondition(cr, "InferenceServicesPresent").Message
	assert.Contains(t, msg, "ModelMesh Deployment modelmesh-serving-taken")
	assert.Contains(t, msg, "model-serving-config", "the message says where the processor goes instead")
	assert.Equal(t, "http://elsewhere", processorsOf(t, ns, "modelmesh-serving-taken"), "another manager's variable is not forced")
	assert.Equal(t, "-", processorsOf(t, ns, "plain"), "a Deployment without ModelMesh's label is not touched")

	// The other manager adds the processor itself: found, and co-owned.
	taken := &appsv1.Deployment{}
	require.NoError(t, get(ns, "modelmesh-serving-taken", taken))
	taken.Spec.Template.Spec.Containers[1].Env[0].Value = "http://elsewhere " + url
	require.NoError(t, k8s.Update(ctx, taken))
	waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionTrue, "InferenceServicesFound")

	// One made later is wired within seconds, through the watch.
	start := time.Now()
	require.NoError(t, k8s.Create(ctx, modelMeshDeployment(ns, "modelmesh-serving-later")))
	waitProcessors(t, ns, "modelmesh-serving-later", url)
	t.Logf("a ModelMesh Deployment made later was wired in %s", time.Since(start).Round(time.Millisecond))

	// Configured Deployments are not written again.
	ovms := &appsv1.Deployment{}
	require.NoError(t, get(ns, "modelmesh-serving-ovms", ovms))
	rv := ovms.ResourceVersion
	time.Sleep(5 * reconcilePeriod)
	require.NoError(t, get(ns, "modelmesh-serving-ovms", ovms))
	assert.Equal(t, rv, ovms.ResourceVersion, "a configured ModelMesh Deployment is not written again")

	// A second service does not fight the first.
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	require.NoError(t, k8s.Create(ctx, newTAS(ns, "second")))
	second := waitTAS(t, ns, "second", "InferenceServicesPresent", metav1.ConditionFalse, "NamespaceWiredByAnother")
	assert.Contains(t, tasCondition(second, "InferenceServicesPresent").Message, "TrustyAIService tas")
	assert.Equal(t, url, processorsOf(t, ns, "modelmesh-serving-ovms"))

	// The first deleted: the second takes over, in place.
	require.NoError(t, k8s.Delete(ctx, cr))
	eventually(t, "the first CR deleted", func() error { return gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	url2 := "http://second." + ns + ".svc/consumer/kserve/v2"
	waitProcessors(t, ns, "modelmesh-serving-ovms", url2)
	waitProcessors(t, ns, "modelmesh-serving-later", url2)
	waitTAS(t, ns, "second", "InferenceServicesPresent", metav1.ConditionFalse, "FieldOwnedElsewhere")

	// The last deleted: what the wiring applied is given back.
	require.NoError(t, get(ns, "second", second))
	require.NoError(t, k8s.Delete(ctx, second))
	eventually(t, "the second CR deleted", func() error { return gone(ns, "second", &trustyv1.TrustyAIService{}) })
	for _, name := range []string{"modelmesh-serving-ovms", "modelmesh-serving-later"} {
		assert.Equal(t, "-", processorsOf(t, ns, name), "%s: the variable the wiring alone set is gone", name)
		d := &appsv1.Deployment{}
		require.NoError(t, get(ns, name, d))
		assert.False(t, wiringOwner(d), "%s: nothing the wiring applied stays", name)
		assert.Equal(t, "kserve/modelmesh", d.Spec.Template.Spec.Containers[1].Image, "the owner's fields stay")
	}
	assert.Equal(t, "http://elsewhere "+url, processorsOf(t, ns, "modelmesh-serving-taken"), "another manager's value stays as that manager set it")
}

// A controller that reverts the wiring (as ModelMesh's did on a redeploy, and
// KServe's before it settled) meets a bounded number of writes: three within
// the window, then RevertedByAnother names the other writer.
func TestTrustyAIServiceModelMeshReverted(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, modelMeshDeployment(ns, "modelmesh-serving")))
	require.NoError(t, k8s.Create(ctx, newTAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	revert := func() {
		t.Helper()
		d := &appsv1.Deployment{}
		require.NoError(t, get(ns, "modelmesh-serving", d))
		d.Spec.Template.Spec.Containers[1].Env = nil
		require.NoError(t, k8s.Update(ctx, d), "the other controller writes its Deployment back")
	}
	waitProcessors(t, ns, "modelmesh-serving", url)
	for i := 2; i <= 3; i++ {
		revert()
		waitProcessors(t, ns, "modelmesh-serving", url)
	}
	revert()
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionFalse, "RevertedByAnother")
	msg := tasCondition(cr, "InferenceServicesPresent").Message
	assert.Contains(t, msg, "ModelMesh Deployment modelmesh-serving")
	assert.Contains(t, msg, "removed what the operator applied 3 times")
	time.Sleep(5 * reconcilePeriod)
	assert.Equal(t, "-", processorsOf(t, ns, "modelmesh-serving"), "the spent budget holds: no fourth write")
}

// The wiring's applies carry the UID of the object listed, so that one gone
// since is never created by the apply: the API server answers with the
// conflict the wiring's vanished() recognises.
func TestApplyWithUIDNeverCreates(t *testing.T) {
	ns := newNamespace(t)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName("gone")
	u.SetUID("0b1c7c8e-0000-4000-8000-000000000000")
	err := k8s.Patch(context.Background(), u, client.Apply, client.FieldOwner("ai-stack-operator-trustyai"))
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "%v", err)
	assert.Contains(t, err.Error(), "uid mismatch")
	assert.True(t, apierrors.IsNotFound(get(ns, "gone", &appsv1.Deployment{})), "nothing was created")

	// An object of its name with another UID (replaced since it was listed):
	// refused, and left as it is.
	require.NoError(t, k8s.Create(context.Background(), modelMeshDeployment(ns, "replaced")))
	u.SetName("replaced")
	err = k8s.Patch(context.Background(), u, client.Apply, client.FieldOwner("ai-stack-operator-trustyai"))
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "metadata.uid")
}
