package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/argocd"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// health evaluates the kind's Argo CD health check (config/argocd) on the
// live object, as Argo CD would, without open libraries.
func health(t *testing.T, checks map[string]argocd.Check, gvk schema.GroupVersionKind, ns, name string) argocd.Health {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	h, err := argocd.Evaluate(checks[gvk.Group+"_"+gvk.Kind].Script, u.Object, false)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func waitHealth(t *testing.T, checks map[string]argocd.Check, gvk schema.GroupVersionKind, ns, name, status, message string) {
	t.Helper()
	env.Eventually(t, fmt.Sprintf("%s %s %s", gvk.Kind, status, message), func() error {
		if h := health(t, checks, gvk, ns, name); h.Status != status || (message != "" && h.Message != message) {
			return fmt.Errorf("health %+v", h)
		}
		return nil
	})
}

// The Argo CD health checks on live objects after real reconciles, with real
// (simulated) pods: Healthy when Ready, Progressing while a rollout cannot
// finish, Degraded with the operator's message for an invalid spec. The
// scripts cannot drift from the conditions the code writes.
func TestArgoCDHealthOfLiveObjects(t *testing.T) {
	ctx := context.Background()
	loaded, err := argocd.Load(filepath.Join("..", "..", "config", "argocd"))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]argocd.Check{}
	for _, c := range loaded {
		checks[c.Key()] = c
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd-health"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	installProxyRole(t, ctx)
	stop := startOperator(t)
	defer stop()

	llsd := llamav1alpha1.GroupVersion.WithKind("LlamaStackDistribution")
	cr := framework.LLSD(ns.Name, "health")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 1)
	waitHealth(t, checks, llsd, ns.Name, "health", "Healthy", "Ready: the server runs the current spec")

	// A rollout that cannot finish: pods that never become Ready.
	env.Update(t, cr, func() {
		cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Image: "registry.example.com/llama-stack-never-ready:1"}
	})
	env.Eventually(t, "Progressing with the operator's rollout message", func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(llsd)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), u); err != nil {
			return err
		}
		if gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); gen != 2 {
			return fmt.Errorf("generation %d observed", gen)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			c := c.(map[string]any)
			if c["type"] != "Ready" {
				continue
			}
			h, err := argocd.Evaluate(checks["llamastack.io_LlamaStackDistribution"].Script, u.Object, false)
			if err != nil {
				return err
			}
			if want := fmt.Sprintf("%s: %s", c["reason"], c["message"]); c["status"] != "False" || h.Status != "Progressing" || h.Message != want {
				return fmt.Errorf("health %+v for Ready %v", h, c)
			}
			t.Logf("rolling: %+v", h)
			return nil
		}
		return fmt.Errorf("no Ready condition")
	})

	// An invalid spec: Degraded, with the operator's words.
	env.Update(t, cr, func() { cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Name: "no-such-distribution"} })
	env.WaitPhase(t, cr, llamav1alpha1.PhaseFailed, 3)
	want := ""
	for _, c := range cr.Status.Conditions {
		if c.Type == "Reconciled" {
			want = c.Reason + ": " + c.Message
		}
	}
	waitHealth(t, checks, llsd, ns.Name, "health", "Degraded", want)

	tas := trustyv1.GroupVersion.WithKind("TrustyAIService")
	svc := framework.TASDatabase(ns.Name, "health-tas")
	if err := k8s.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, checks, tas, ns.Name, "health-tas", "Healthy", "AllComponentsReady: the service runs the current spec")
}
