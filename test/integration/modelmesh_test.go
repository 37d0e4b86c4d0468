package integration

import (
	"context"
	"fmt"
	"strings"
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
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// processorsOf is MM_PAYLOAD_PROCESSORS of the mm container; "-" when unset.
func processorsOf(t *testing.T, ns, name string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, name, d))
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
	env.Eventually(t, fmt.Sprintf("%s's MM_PAYLOAD_PROCESSORS %q", name, want), func() error {
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
// applied to MM_PAYLOAD_PROCESSORS by server-side apply, or appended once to
// the list another manager set. A second service in the namespace does not
// fight the first; it takes over when the first is deleted, and the last
// one's deletion gives back every field the wiring applied and takes its URL
// out of the other's list.
func TestTrustyAIServiceModelMeshWiring(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-ovms")))
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-taken", corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: "http://elsewhere"})))
	unlabelled := framework.ModelMeshDeployment(ns, "plain")
	unlabelled.Labels = map[string]string{"name": "plain"}
	require.NoError(t, k8s.Create(ctx, unlabelled))

	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	waitProcessors(t, ns, "modelmesh-serving-ovms", url)
	waitProcessors(t, ns, "modelmesh-serving-taken", "http://elsewhere "+url)
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionTrue, "InferenceServicesFound")
	assert.Contains(t, tasCondition(cr, "InferenceServicesPresent").Message, "ModelMesh Deployment modelmesh-serving-taken: the service's URL is appended to the MM_PAYLOAD_PROCESSORS that another manager set")
	assert.Equal(t, "-", processorsOf(t, ns, "plain"), "a Deployment without ModelMesh's label is not touched")

	// One made later is wired within seconds, through the watch.
	start := time.Now()
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-later")))
	waitProcessors(t, ns, "modelmesh-serving-later", url)
	t.Logf("a ModelMesh Deployment made later was wired in %s", time.Since(start).Round(time.Millisecond))

	// Configured Deployments are not written again.
	ovms := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "modelmesh-serving-ovms", ovms))
	rv := ovms.ResourceVersion
	time.Sleep(5 * reconcilePeriod)
	require.NoError(t, env.Get(ns, "modelmesh-serving-ovms", ovms))
	assert.Equal(t, rv, ovms.ResourceVersion, "a configured ModelMesh Deployment is not written again")

	// A second service does not fight the first.
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "second")))
	second := waitTAS(t, ns, "second", "InferenceServicesPresent", metav1.ConditionFalse, "NamespaceWiredByAnother")
	assert.Contains(t, tasCondition(second, "InferenceServicesPresent").Message, "TrustyAIService tas")
	assert.Equal(t, url, processorsOf(t, ns, "modelmesh-serving-ovms"))

	// The first deleted: the second takes over, in place.
	require.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the first CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	url2 := "http://second." + ns + ".svc/consumer/kserve/v2"
	waitProcessors(t, ns, "modelmesh-serving-ovms", url2)
	waitProcessors(t, ns, "modelmesh-serving-later", url2)
	waitProcessors(t, ns, "modelmesh-serving-taken", "http://elsewhere "+url2)
	waitTAS(t, ns, "second", "InferenceServicesPresent", metav1.ConditionTrue, "InferenceServicesFound")

	// The last deleted: what the wiring applied is given back.
	require.NoError(t, env.Get(ns, "second", second))
	require.NoError(t, k8s.Delete(ctx, second))
	env.Eventually(t, "the second CR deleted", func() error { return env.Gone(ns, "second", &trustyv1.TrustyAIService{}) })
	for _, name := range []string{"modelmesh-serving-ovms", "modelmesh-serving-later"} {
		assert.Equal(t, "-", processorsOf(t, ns, name), "%s: the variable the wiring alone set is gone", name)
		d := &appsv1.Deployment{}
		require.NoError(t, env.Get(ns, name, d))
		assert.False(t, wiringOwner(d), "%s: nothing the wiring applied stays", name)
		assert.Equal(t, "kserve/modelmesh", d.Spec.Template.Spec.Containers[1].Image, "the owner's fields stay")
	}
	assert.Equal(t, "http://elsewhere", processorsOf(t, ns, "modelmesh-serving-taken"), "another manager's value stays as that manager set it")
}

// Another manager's MM_PAYLOAD_PROCESSORS (kubectl apply, ModelMesh's
// controller) keeps its value, byte for byte: the URL is appended once by a
// patch of that value alone, nothing is written again, and deleting the
// service takes the URL out and leaves the rest as it was. Where the wiring
// applied the variable first and another manager then set its value, giving
// back the wiring's fields keeps the entry and that value.
func TestTrustyAIServiceModelMeshAppendsToAnothersList(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	const theirs = "http://elsewhere.example  http://audit.example/v2"
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-theirs", corev1.EnvVar{Name: "OTHER", Value: "1"}, corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: theirs}), client.FieldOwner("kubectl-client-side-apply")))
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving-later-theirs")))

	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	waitProcessors(t, ns, "modelmesh-serving-theirs", theirs+" "+url)
	waitProcessors(t, ns, "modelmesh-serving-later-theirs", url)
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionTrue, "InferenceServicesFound")
	assert.Contains(t, tasCondition(cr, "InferenceServicesPresent").Message, "appended to the MM_PAYLOAD_PROCESSORS that another manager set")
	env.Eventually(t, "the event says the URL was appended", func() error {
		list := &corev1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "InferenceServiceConfigured" && strings.Contains(e.Message, `appended to the MM_PAYLOAD_PROCESSORS that "kubectl-client-side-apply" set`) {
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(list.Items))
	})

	d := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "modelmesh-serving-theirs", d))
	assert.Equal(t, "1", d.Spec.Template.Spec.Containers[1].Env[0].Value, "the other variables stay")
	for _, m := range d.ManagedFields {
		assert.NotEqual(t, "ai-stack-operator-trustyai", m.Manager, "nothing applied: the variable was edited, and only its value")
	}
	rv := d.ResourceVersion
	time.Sleep(5 * reconcilePeriod)
	require.NoError(t, env.Get(ns, "modelmesh-serving-theirs", d))
	assert.Equal(t, rv, d.ResourceVersion, "appended once: not written again")

	// The wiring applied this one's variable; another manager then sets a
	// value of its own, and the URL is appended to it.
	later := &appsv1.Deployment{}
	require.NoError(t, env.Get(ns, "modelmesh-serving-later-theirs", later))
	later.Spec.Template.Spec.Containers[1].Env[0].Value = "http://x.example"
	require.NoError(t, k8s.Update(ctx, later, client.FieldOwner("modelmesh-controller")))
	waitProcessors(t, ns, "modelmesh-serving-later-theirs", "http://x.example "+url)

	require.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	assert.Equal(t, theirs, processorsOf(t, ns, "modelmesh-serving-theirs"), "the other's list as it was, byte for byte")
	assert.Equal(t, "http://x.example", processorsOf(t, ns, "modelmesh-serving-later-theirs"), "the give-back keeps the entry and the other's value")
}

// The write budget bounds a fight over another manager's list too: a
// controller that keeps writing its own value back meets three appends
// within the window, then RevertedByAnother, and no fourth write.
func TestTrustyAIServiceModelMeshAppendReverted(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	const theirs = "http://elsewhere.example"
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving", corev1.EnvVar{Name: "MM_PAYLOAD_PROCESSORS", Value: theirs}), client.FieldOwner("modelmesh-controller")))
	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	revert := func() {
		t.Helper()
		d := &appsv1.Deployment{}
		require.NoError(t, env.Get(ns, "modelmesh-serving", d))
		d.Spec.Template.Spec.Containers[1].Env[0].Value = theirs
		require.NoError(t, k8s.Update(ctx, d, client.FieldOwner("modelmesh-controller")), "the other controller writes its Deployment back")
	}
	waitProcessors(t, ns, "modelmesh-serving", theirs+" "+url)
	for i := 2; i <= 3; i++ {
		revert()
		waitProcessors(t, ns, "modelmesh-serving", theirs+" "+url)
	}
	revert()
	cr := waitTAS(t, ns, "tas", "InferenceServicesPresent", metav1.ConditionFalse, "RevertedByAnother")
	msg := tasCondition(cr, "InferenceServicesPresent").Message
	assert.Contains(t, msg, `"modelmesh-controller" removed what the operator applied 3 times`)
	assert.Contains(t, msg, "model-serving-config", "the message says where the processor goes instead")
	time.Sleep(5 * reconcilePeriod)
	assert.Equal(t, theirs, processorsOf(t, ns, "modelmesh-serving"), "the spent budget holds: no fourth write")

	// Deleting the service leaves the other's value alone.
	require.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the CR deleted", func() error { return env.Gone(ns, "tas", &trustyv1.TrustyAIService{}) })
	assert.Equal(t, theirs, processorsOf(t, ns, "modelmesh-serving"))
}

// A controller that reverts the wiring (as ModelMesh's did on a redeploy, and
// KServe's before it settled) meets a bounded number of writes: three within
// the window, then RevertedByAnother names the other writer.
func TestTrustyAIServiceModelMeshReverted(t *testing.T) {
	ns := env.NewNamespace(t, "")
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, framework.ModelMeshDeployment(ns, "modelmesh-serving")))
	require.NoError(t, k8s.Create(ctx, framework.TAS(ns, "tas")))
	url := "http://tas." + ns + ".svc/consumer/kserve/v2"
	revert := func() {
		t.Helper()
		d := &appsv1.Deployment{}
		require.NoError(t, env.Get(ns, "modelmesh-serving", d))
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
	t.Parallel()
	ns := env.NewNamespace(t, "")
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName("gone")
	u.SetUID("0b1c7c8e-0000-4000-8000-000000000000")
	err := k8s.Patch(context.Background(), u, client.Apply, client.FieldOwner("ai-stack-operator-trustyai")) //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "%v", err)
	assert.Contains(t, err.Error(), "uid mismatch")
	assert.True(t, apierrors.IsNotFound(env.Get(ns, "gone", &appsv1.Deployment{})), "nothing was created")

	// An object of its name with another UID (replaced since it was listed):
	// refused, and left as it is.
	require.NoError(t, k8s.Create(context.Background(), framework.ModelMeshDeployment(ns, "replaced")))
	u.SetName("replaced")
	err = k8s.Patch(context.Background(), u, client.Apply, client.FieldOwner("ai-stack-operator-trustyai")) //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "metadata.uid")
}
