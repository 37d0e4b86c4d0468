// Package cluster runs the operator's manager against the local cluster of
// internal/localcluster (controllers, scheduler, simulated nodes), for what
// needs real pods, rollouts and garbage collection.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
	"k8s.io/client-go/util/retry"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cluster, err = localcluster.Start(context.Background(), localcluster.Options{Dir: dir, CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Stop()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ai-stack-operator-system"}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startOperator runs the operator's manager, as the cluster's administrator,
// until the returned function is called.
func startOperator(t *testing.T) (stop func()) {
	t.Helper()
	return runManager(t, cluster.Config, nil)
}

// runManager runs a manager with the suite's options (changed by tune, if
// given) until the returned function is called.
func runManager(t *testing.T, cfg *rest.Config, tune func(*operator.ManagerOptions)) (stop func()) {
	t.Helper()
	ws, err := watches.Load(filepath.Join("..", "..", "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o := operator.ManagerOptions{
		Watches: ws, MetricsAddr: "0", ProbeAddr: "0", OperatorNamespace: "ai-stack-operator-system",
		SettingsConfigMap: "ai-stack-operator-config", SkipControllerNameValidation: true,
	}
	if tune != nil {
		tune(&o)
	}
	mgr, err := operator.NewManager(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

// newCR is a one-replica starter distribution.
func newCR(ns, name string) *llamav1alpha1.LlamaStackDistribution {
	return &llamav1alpha1.LlamaStackDistribution{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{
			Distribution: llamav1alpha1.DistributionType{Name: "starter"},
		}},
	}
}

// newTAS is a TrustyAIService in DATABASE mode: no volume to bind here, and
// the simulated nodes start its pods without the Secret.
func newTAS(ns, name string) *trustyv1.TrustyAIService {
	return &trustyv1.TrustyAIService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trustyv1.TrustyAIServiceSpec{
			Storage: trustyv1.StorageSpec{Format: "DATABASE", DatabaseConfigurations: "db"},
			Metrics: trustyv1.MetricsSpec{Schedule: "5s"},
		},
	}
}

// waitTASReady waits for the TrustyAIService (read into tas) to be Ready at
// its current generation.
func waitTASReady(t *testing.T, tas *trustyv1.TrustyAIService) {
	t.Helper()
	eventually(t, "the TrustyAIService Ready in "+tas.Namespace, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tas), tas); err != nil {
			return err
		}
		if tas.Status.Phase != trustyv1.PhaseReady || tas.Status.ObservedGeneration != tas.Generation {
			return fmt.Errorf("phase %q, conditions %+v", tas.Status.Phase, tas.Status.Conditions)
		}
		return nil
	})
}

// modelMeshDeployment is a Deployment as ModelMesh Serving makes one (its
// label, an mm container and the others given), admitted by Pod Security's
// restricted profile, which the cluster enforces.
func modelMeshDeployment(ns, name string, containers ...string) *appsv1.Deployment {
	labels := map[string]string{"modelmesh-service": "modelmesh-serving", "name": name}
	var cs []corev1.Container
	for _, c := range append(containers, "mm") {
		cs = append(cs, restricted(c, "kserve/"+c))
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers:      cs,
				},
			},
		},
	}
}

// waitPhase waits for the CR (read into cr) to reach the phase at generation
// gen (any generation when 0) with at least min available replicas.
func waitPhase(t *testing.T, cr *llamav1alpha1.LlamaStackDistribution, phase llamav1alpha1.DistributionPhase, gen int64, min ...int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("phase %s (generation %d)", phase, gen), func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		if cr.Status.Phase != phase || (gen != 0 && cr.Status.ObservedGeneration != gen) {
			return fmt.Errorf("phase %q at generation %d, conditions %+v", cr.Status.Phase, cr.Status.ObservedGeneration, cr.Status.Conditions)
		}
		if len(min) > 0 && cr.Status.AvailableReplicas < min[0] {
			return fmt.Errorf("%d available, want %d", cr.Status.AvailableReplicas, min[0])
		}
		return nil
	})
}

// goneFrom returns nil once the object does not exist.
// update reads the CR, applies change and updates it, again on a conflict:
// the operator may write the status between the test's read and its update.
func update(t *testing.T, cr client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		change()
		return k8s.Update(context.Background(), cr)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func goneFrom(obj client.Object) func() error {
	return func() error {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%T %s still there (%v)", obj, obj.GetName(), err)
	}
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s: %v", what, err)
}

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
	cr := newCR(ns.Name, "orphan")
	cr.Spec.Replicas = 2
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, cr, llamav1alpha1.PhaseReady, 0, 2)
	stop()

	// The operator is down: remove its finalizer by hand and delete the CR.
	update(t, cr, func() { cr.Finalizers = nil })
	if err := k8s.Delete(ctx, cr, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	eventually(t, "the Deployment, Service, ServiceAccount, NetworkPolicy and pods collected", func() error {
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
				return fmt.Errorf("%s still there (%v)", name, err)
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
	cr := newCR(ns.Name, "upd")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, cr, llamav1alpha1.PhaseReady, 1, 1)

	update(t, cr, func() {
		cr.Spec.Replicas = 2
		cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "quay.io/example/llama:v2"}
	})
	waitPhase(t, cr, llamav1alpha1.PhaseReady, 2, 2)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
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
	cr := newCR(ns.Name, "doomed")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, cr, llamav1alpha1.PhaseReady, 0)
	// A TrustyAIService that wired a ModelMesh Deployment: its undo runs in
	// a namespace that is being deleted, where nothing can be created and
	// the Deployment may already be gone (upstream #218, #62).
	tas := newTAS(ns.Name, "doomed-tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	mm := modelMeshDeployment(ns.Name, "modelmesh-serving")
	if err := k8s.Create(ctx, mm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ModelMesh Deployment wired", func() error {
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
	eventually(t, "the namespace gone", goneFrom(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}))
}
