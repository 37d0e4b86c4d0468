package localcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

func deployment(name, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "c", Image: image, SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					}}},
				},
			},
		},
	}
}

// The local cluster runs Deployments to Ready pods on simulated nodes,
// enforces Pod Security, keeps never-ready images unready, collects garbage,
// and leaves no process behind when it stops.
func TestLocalCluster(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ns := "default"

	start := time.Now()
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, deployment("ready", "example.com/app:1", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "2 ready replicas", func() error {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "ready", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	t.Logf("a 2-replica Deployment was Ready in %v", time.Since(start).Round(time.Millisecond))
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=ready"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods %v, %v", pods, err)
	}
	zonesSeen := map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node %q, phase %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
		if p.Spec.ServiceAccountName != "default" {
			t.Errorf("ServiceAccount admission did not run: %q", p.Spec.ServiceAccountName)
		}
		zonesSeen[p.Spec.NodeName] = true
	}

	// Pod Security "restricted" is enforced.
	privileged := deployment("root", "example.com/app:1", 1)
	privileged.Spec.Template.Spec.SecurityContext = nil
	privileged.Spec.Template.Spec.Containers[0].SecurityContext = nil
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: privileged.Spec.Template.Spec}, metav1.CreateOptions{})
	if err == nil {
		t.Error("a pod that breaks the restricted Pod Security standard was admitted")
	}

	// An image with "never-ready" runs and never becomes Ready.
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("stuck", "example.com/never-ready:1", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "a running, unready pod", func() error {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=stuck"})
		if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pods %d, %w", len(pods.Items), err)
		}
		return nil
	})
	time.Sleep(time.Second)
	if d, _ := cs.AppsV1().Deployments(ns).Get(ctx, "stuck", metav1.GetOptions{}); d.Status.ReadyReplicas != 0 {
		t.Errorf("a never-ready pod became ready: %+v", d.Status)
	}

	// The garbage collector removes what a deleted Deployment owned.
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, "ready", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "pods garbage-collected", func() error {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=ready"})
		if err != nil || len(pods.Items) != 0 {
			return fmt.Errorf("%d pods left, %v", len(pods.Items), err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		return nil
	})

	before, err := Children()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 5 {
		t.Fatalf("expected etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as children, found %v", before)
	}
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	after, err := Children()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 0 {
		t.Fatalf("processes left after Stop: %v", after)
	}
}
