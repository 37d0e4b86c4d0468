package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	must "github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

const switchDoc = "docs/switching.md"

// upstreamOperator is a stand-in for an upstream operator's Deployment as
// its kustomize install leaves it (name, namespace, a restricted pod); the
// switch only scales it.
func upstreamOperator(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	labels := map[string]string{"control-plane": "controller-manager"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "manager", Image: "example.com/upstream/operator:v1", Args: []string{"--leader-elect"},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		}},
	}}
	must.NoError(t, k8s.Create(ctx, d))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), d) })
	env.Eventually(t, ns+"/"+name+" running", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 1 {
			return fmt.Errorf("%d available", d.Status.AvailableReplicas)
		}
		return nil
	})
	return d
}

// crdAsOLMLeftIt gives a CRD's controller-gen annotation the value of
// upstream's CRD, written by Update under a manager of its own, as OLM's
// catalog operator (or an operator of Open Data Hub) writes the CRDs it
// installs: the field is theirs, and a server-side apply of another value
// by kubectl conflicts with it. It returns this operator's value.
func crdAsOLMLeftIt(t *testing.T, name string) (ours string) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Name: name}, crd))
	const key = "controller-gen.kubebuilder.io/version"
	a := crd.GetAnnotations()
	ours = a[key]
	must.NotEmpty(t, ours)
	a[key] = "v0.17.2" // llama-stack-k8s-operator 7735e43's CRDs
	crd.SetAnnotations(a)
	must.NoError(t, k8s.Update(ctx, crd, client.FieldOwner("catalog")))
	return ours
}

// The switch as docs/switching.md has an administrator run it, every step
// its own block run as written: upstream's operators (llama-stack-k8s-
// operator in its namespace, trustyai-service-operator in one of the
// administrator's, ogx-k8s-operator not installed) are scaled to 0 by the
// one loop, the server they served keeps running; `make build-installer`
// and the server-side apply of dist/install.yaml install this operator over
// CRDs whose fields another manager holds (as OLM leaves them: the apply
// conflicts without --force-conflicts), and its binary runs as that file's
// Deployment runs it, with that file's RBAC and admission policies in
// force; the CR is Ready in `kubectl get` with every object taken over, and
// one whose Service is a user's is listed among the NameConflict events. The
// way back: this operator scaled to 0, switch-back, upstream's operators
// scaled back; the CRs carry no finalizer, their objects upstream's labels,
// and a CR deleted then goes, its claim stays.
func TestSwitchAsDocumented(t *testing.T) {
	ctx := context.Background()
	kubeconfig := framework.AdminKubeconfig(t, config)
	llama := upstreamOperator(t, "llama-stack-k8s-operator-system", "llama-stack-k8s-operator-controller-manager")
	trusty := upstreamOperator(t, "trustyai-ops", "trustyai-service-operator-controller-manager")

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-doc", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))
	cr := &llamav1alpha1.LlamaStackDistribution{}
	must.NoError(t, yaml.UnmarshalStrict([]byte(upstreamLLSDWithStorage), cr))
	cr.Namespace = ns.Name
	must.NoError(t, k8s.Create(ctx, cr))
	objs := upstreamLLSDObjects(cr)
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, objs)
	// A second CR upstream never served, whose Service name a user's
	// Service holds: it waits, NameConflict.
	blocked := cr.DeepCopy()
	blocked.ObjectMeta = metav1.ObjectMeta{Namespace: ns.Name, Name: "in-the-way"}
	blocked.Spec.Server.Storage = nil
	must.NoError(t, k8s.Create(ctx, blocked))
	must.NoError(t, k8s.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: blocked.Name + "-service"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}))
	ours := crdAsOLMLeftIt(t, "llamastackdistributions.llamastack.io")

	// 1. Stop the upstream operators.
	out := framework.RunDocCommand(t, switchDoc, "stop-upstream", kubeconfig)
	t.Logf("stop-upstream:\n%s", out)
	for _, d := range []*appsv1.Deployment{llama, trusty} {
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(d), d))
		assert.Equal(t, int32(0), *d.Spec.Replicas, "%s/%s scaled to 0", d.Namespace, d.Name)
	}
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep))
	assert.Equal(t, int32(1), dep.Status.AvailableReplicas, "the server keeps running")

	// 2. Install: what dist/install.yaml creates is deleted at the end (but
	// the CRDs and the namespace, as a user keeps them).
	planned, err := olm.Installer(framework.Root(), "image")
	must.NoError(t, err)
	var created []*unstructured.Unstructured
	for _, o := range framework.Objects(t, planned) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(o.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), existing); apierrors.IsNotFound(err) && o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			created = append(created, o)
		}
	}
	t.Cleanup(func() {
		for i := len(created) - 1; i >= 0; i-- {
			_ = k8s.Delete(context.Background(), created[i])
		}
	})
	out = framework.RunDocCommand(t, switchDoc, "install", kubeconfig)
	t.Logf("install:\n%s", framework.Tail(out, 12))
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Name: "llamastackdistributions.llamastack.io"}, crd))
	assert.Equal(t, ours, crd.GetAnnotations()["controller-gen.kubebuilder.io/version"], "the CRD is this operator's")

	// The operator as dist/install.yaml's Deployment runs it.
	raw, err := os.ReadFile(filepath.Join(framework.Root(), "dist", "install.yaml"))
	must.NoError(t, err)
	var installed *appsv1.Deployment
	for _, o := range framework.Objects(t, raw) {
		if o.GetKind() == "Deployment" {
			installed = &appsv1.Deployment{}
			must.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, installed))
		}
	}
	must.NotNil(t, installed, "dist/install.yaml holds the operator's Deployment")
	pod := installed.Spec.Template.Spec
	var once sync.Once
	stopOperator := framework.RunAsContainer(t, managerBinary(t), pod.Containers[0],
		framework.ServiceAccountKubeconfig(t, config, installed.Namespace, pod.ServiceAccountName), installed.Namespace, nil, "dist/install.yaml")
	stop := func() { once.Do(stopOperator) }
	defer stop()

	// 3. Ready, as the administrator watches it; the CR whose Service is a
	// user's is listed as waiting.
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 0, 1)
	env.Eventually(t, "the NameConflict event", func() error { return env.HasReason(t, ns.Name, blocked.Name, "NameConflict") })
	out = framework.RunDocCommand(t, switchDoc, "watch", kubeconfig)
	t.Logf("watch:\n%s", out)
	row := ""
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == ns.Name && (f[1] == cr.Name || strings.HasSuffix(f[1], "/"+cr.Name)) {
			row = line
		}
	}
	assert.Contains(t, row, "Ready", "kubectl get:\n%s", out)
	assert.Regexp(t, "(?m)^"+ns.Name+" .*NameConflict .*/"+blocked.Name+" ", out, "the CR waiting on a user's Service is listed")
	assertTakenOver(t, objs, before, nil)
	assertRollouts(t, dep, 1)

	// The way back: this operator stopped (its pod would end: the binary
	// ends), the CRs handed back, upstream's operators started again.
	framework.RunDocCommand(t, switchDoc, "stop-operator", kubeconfig)
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(installed), installed))
	assert.Equal(t, int32(0), *installed.Spec.Replicas, "this operator scaled to 0")
	stop()
	out = framework.RunDocCommand(t, switchDoc, "switch-back", kubeconfig)
	t.Logf("switch-back:\n%s", framework.Tail(out, 20))
	for _, o := range []client.Object{cr, blocked} {
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(o), o))
		assert.Empty(t, o.GetFinalizers(), "%s: no finalizer left", o.GetName())
	}
	for _, o := range objs {
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(o), o))
		assert.Equal(t, "true", o.GetLabels()["llamastack.io/watch"], "%T %s selected by upstream's cache again", o, o.GetName())
	}
	framework.RunDocCommand(t, switchDoc, "start-upstream", kubeconfig)
	for _, d := range []*appsv1.Deployment{llama, trusty} {
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(d), d))
		assert.Equal(t, int32(1), *d.Spec.Replicas, "%s/%s scaled back", d.Namespace, d.Name)
	}

	// Nothing is stuck: the CR goes, its claim stays.
	must.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the CR deleted", env.GoneFrom(cr))
	claim := &corev1.PersistentVolumeClaim{}
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cr.Name + "-pvc"}, claim))
	assert.Equal(t, before[fmt.Sprintf("%T %s", claim, claim.Name)], claim.UID, "the claim stays")
}
