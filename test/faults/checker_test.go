package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// The convergence check the fault tests rely on finds what it must: an
// object changed behind the operator's back, a rendered object missing, an
// object of the operator's that nothing accounts for, a CR not at its
// generation; and the operator, started again, repairs all but the last.
func TestCheckerFindsWhatIsWrong(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "checker")
	op := runOperator(t, "checker-op", "")
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	crs := batch(ns, 4)
	create(t, crs)()
	waitConverged(t, 2*time.Minute, ns)
	op.Stop()

	dep := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llsd-000"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "example.com/changed:1"
	if err := k8s.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llsd-001-service"}}); err != nil {
		t.Fatal(err)
	}
	leak := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaked", Labels: map[string]string{release.LabelManaged: "true"}}}
	if err := k8s.Create(ctx, leak); err != nil {
		t.Fatal(err)
	}
	edit(t, crs[2:3], 1)()

	err := checker.Converged(ctx, ns)
	if err == nil {
		t.Fatal("the check passed with a changed Deployment, a missing Service, a leaked ConfigMap and an edit nobody reconciled")
	}
	for _, want := range []string{
		"LlamaStackDistribution checker/llsd-000: Deployment llsd-000 differs from its release's manifest",
		"LlamaStackDistribution checker/llsd-001: Service llsd-001-service: ",
		"leaked ConfigMap checker/leaked",
		"LlamaStackDistribution checker/llsd-002: status at generation 1 of 2",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the check does not report %q:\n%v", want, err)
		}
	}

	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err = checker.Converged(ctx, ns)
		if err != nil && strings.TrimSpace(err.Error()) == "leaked ConfigMap checker/leaked" {
			break
		}
		if time.Now().After(deadline) {
			cr := crs[1]
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr)
			t.Fatalf("the operator did not repair what it owns:\n%v\n%+v", err, cr)
		}
		time.Sleep(time.Second)
	}
	if err := k8s.Delete(ctx, leak); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, time.Minute, ns)
}
