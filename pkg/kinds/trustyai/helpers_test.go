package trustyai

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func readyDeployment(available int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation, d.Status.ObservedGeneration = 1, 1
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas = available, available, available
	if available == 0 {
		d.Status.Replicas, d.Status.UpdatedReplicas = 1, 1
	}
	return d
}

func boundClaim(size string, phase ...corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{}
	c.Name = "x-pvc"
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	c.Status.Phase = corev1.ClaimBound
	if len(phase) > 0 {
		c.Status.Phase = phase[0]
	}
	return c
}

func route(admitted bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if admitted {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"host": "h", "conditions": []any{map[string]any{"type": "Admitted", "status": "True"}}}}, "status", "ingress")
	}
	return u
}

func waitingPod(reason, msg string) []corev1.Pod {
	return []corev1.Pod{{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "trustyai-service", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}}}
}

func find(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
