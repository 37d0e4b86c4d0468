package cluster

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// With the operator gone (say, uninstalled while CRs lived) and the CR's
// finalizer removed by hand, the garbage collector still removes what the CR
// owned, through the owner references the operator set on every object.
func TestGarbageCollectorRemovesOrphanedObjects(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gc-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t)
	cr := framework.LLSD(ns.Name, "orphan")
	cr.Spec.Replicas = 2
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 0, 2)
	stop()

	// The operator is down: remove its finalizer by hand and delete the CR.
	env.Update(t, cr, func() { cr.Finalizers = nil })
	if err := k8s.Delete(ctx, cr, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(config)
	env.Eventually(t, "the Deployment, Service, ServiceAccount, NetworkPolicy and pods collected", func() error {
		for name, get := range map[string]func() error{
			"Deployment": func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "orphan"}, &appsv1.Deployment{})
			},
			"Service": func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "orphan-service"}, &corev1.Service{})
			},
			"ServiceAccount": func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "orphan-sa"}, &corev1.ServiceAccount{})
			},
		} {
			if err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s still there (%v)", name, err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
			}
		}
		pods, err := cs.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=orphan"})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
}

// An update rolls out through the real Deployment controller, and Ready
// follows the pods: not Ready while old pods serve, Ready once the new ones do.
func TestUpdateRollsOutAndReadyFollowsThePods(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rollout-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t)
	defer stop()
	cr := framework.LLSD(ns.Name, "upd")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 1, 1)

	env.Update(t, cr, func() {
		cr.Spec.Replicas = 2
		cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "quay.io/example/llama:v2"}
	})
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 2, 2)
	cs := kubernetes.NewForConfigOrDie(config)
	pods, err := cs.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=upd"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.Containers[0].Image == "quay.io/example/llama:v2" && p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	if running != 2 {
		t.Fatalf("want 2 running pods of the new image, got %d of %d", running, len(pods.Items))
	}
	events, err := cs.CoreV1().Events(ns.Name).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=upd,reason=Ready"})
	if err != nil || len(events.Items) == 0 {
		t.Fatalf("no Ready event: %v", err)
	}
}

// Deleting a namespace with a CR in it finishes: the operator's finalizer
// goes even though nothing new can be created there any more.
func TestNamespaceDeletionFinishes(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-delete-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t)
	defer stop()
	cr := framework.LLSD(ns.Name, "doomed")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 0)
	// A TrustyAIService that wired a ModelMesh Deployment: its undo runs in
	// a namespace that is being deleted, where nothing can be created and
	// the Deployment may already be gone (upstream #218, #62).
	tas := framework.TASDatabase(ns.Name, "doomed-tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	mm := framework.ModelMeshDeployment(ns.Name, "modelmesh-serving")
	if err := k8s.Create(ctx, mm); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the ModelMesh Deployment wired", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(mm), mm); err != nil {
			return err
		}
		if envOf(mm.Spec.Template.Spec.Containers, "mm", "MM_PAYLOAD_PROCESSORS") == "" {
			return fmt.Errorf("not wired yet")
		}
		return nil
	})
	if err := k8s.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the namespace gone", env.GoneFrom(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}))
}
