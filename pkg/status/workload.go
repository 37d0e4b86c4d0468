package status

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The conditions of the workload objects every kind renders.

// ServiceCondition is ServiceReady: whether the rendered Service exists.
func ServiceCondition(found bool) metav1.Condition {
	if !found {
		return metav1.Condition{Type: TypeServiceReady, Status: metav1.ConditionFalse, Reason: "ServiceNotFound", Message: "the Service does not exist yet"}
	}
	return metav1.Condition{Type: TypeServiceReady, Status: metav1.ConditionTrue, Reason: "ServiceCreated", Message: "the Service exists"}
}

// DeploymentCondition is DeploymentReady: whether the Deployment (nil when
// absent) has the desired replicas of its current spec available, and if
// not, why (rollout in progress or stuck, pods refused by admission).
func DeploymentCondition(d *appsv1.Deployment, desired int32) metav1.Condition {
	c := metav1.Condition{Type: TypeDeploymentReady}
	switch {
	case d == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "DeploymentNotFound", "the Deployment does not exist yet"
	case d.Status.ObservedGeneration < d.Generation:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "RolloutInProgress", "the Deployment controller has not yet observed the latest spec"
	case desired == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "ScaledToZero", "0 replicas requested"
	case replicaFailure(d) != nil && (d.Status.UpdatedReplicas < desired || d.Status.AvailableReplicas < desired || d.Status.Replicas > d.Status.UpdatedReplicas):
		// The ReplicaSet cannot create pods: admission refused them (a missing
		// ServiceAccount, Pod Security, a quota). The message says which.
		c.Status, c.Reason = metav1.ConditionFalse, "PodCreationFailed"
		c.Message = "the Deployment's pods cannot be created: " + replicaFailure(d).Message
	case progressDeadlineExceeded(d) && (d.Status.UpdatedReplicas < desired || d.Status.AvailableReplicas < desired || d.Status.Replicas > d.Status.UpdatedReplicas):
		c.Status, c.Reason = metav1.ConditionFalse, "RolloutStuck"
		c.Message = fmt.Sprintf("the rollout made no progress within the Deployment's progress deadline (%d of %d replicas updated and available); check the pods' events and the image", min(d.Status.UpdatedReplicas, d.Status.AvailableReplicas), desired)
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		// Pods of an older ReplicaSet still run: the current spec is not yet what serves.
		c.Status, c.Reason = metav1.ConditionFalse, "RolloutInProgress"
		c.Message = fmt.Sprintf("%d of %d replicas updated; %d old replicas still run", d.Status.UpdatedReplicas, desired, max(d.Status.Replicas-d.Status.UpdatedReplicas, 0))
	case d.Status.UpdatedReplicas < desired || d.Status.AvailableReplicas < desired:
		c.Status, c.Reason = metav1.ConditionFalse, "ReplicasUnavailable"
		c.Message = fmt.Sprintf("%d of %d replicas updated and available", min(d.Status.UpdatedReplicas, d.Status.AvailableReplicas), desired)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, "MinimumReplicasAvailable"
		c.Message = fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, desired)
	}
	return c
}

// progressDeadlineExceeded is true when the Deployment controller reports the
// rollout stuck (Progressing=False, ProgressDeadlineExceeded).
func progressDeadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

// replicaFailure is the Deployment's ReplicaFailure condition when it is True.
func replicaFailure(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	for i, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// StorageCondition is StorageReady: whether the claim (nil when absent) of
// the requested size (nil when no storage is asked for) is there and bound.
func StorageCondition(requested *resource.Quantity, claim *corev1.PersistentVolumeClaim) metav1.Condition {
	c := metav1.Condition{Type: TypeStorageReady}
	switch {
	case requested == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "NoStorageRequested", "no persistent storage requested; the server uses an emptyDir"
	case claim == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ClaimNotFound", "the PersistentVolumeClaim does not exist yet"
	default:
		claimed := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		switch {
		case requested.Cmp(claimed) < 0:
			c.Status, c.Reason = metav1.ConditionFalse, "ShrinkRefused"
			c.Message = fmt.Sprintf("spec.server.storage.size %s is smaller than the claim's %s and a claim cannot shrink; set %s or more (the claim keeps %s)", requested.String(), claimed.String(), claimed.String(), claimed.String())
		case claim.Status.Phase != corev1.ClaimBound:
			c.Status, c.Reason = metav1.ConditionFalse, "ClaimPending"
			c.Message = fmt.Sprintf("the PersistentVolumeClaim %s is %s, not Bound", claim.Name, phaseOrPending(claim.Status.Phase))
		default:
			c.Status, c.Reason = metav1.ConditionTrue, "ClaimBound"
			c.Message = fmt.Sprintf("the PersistentVolumeClaim %s is Bound", claim.Name)
		}
	}
	return c
}

func phaseOrPending(p corev1.PersistentVolumeClaimPhase) string {
	if p == "" {
		return string(corev1.ClaimPending)
	}
	return string(p)
}

// RouteURL is the external URL of an OpenShift Route: https and the host the
// router admitted it with (or its spec's host); "" while none is known.
func RouteURL(route *unstructured.Unstructured) string {
	if route == nil {
		return ""
	}
	host, _, _ := unstructured.NestedString(route.Object, "spec", "host")
	if ingress, _, _ := unstructured.NestedSlice(route.Object, "status", "ingress"); len(ingress) > 0 {
		if m, ok := ingress[0].(map[string]any); ok {
			if h, ok := m["host"].(string); ok && h != "" {
				host = h
			}
		}
	}
	if host == "" {
		return ""
	}
	return "https://" + host
}

// IngressURL is the external URL of an Ingress: its first rule's host, or
// the load balancer's name or address, with https when it has TLS; "" while
// none is known.
func IngressURL(ing *networkingv1.Ingress) string {
	if ing == nil {
		return ""
	}
	host := ""
	if len(ing.Spec.Rules) > 0 {
		host = ing.Spec.Rules[0].Host
	}
	if host == "" && len(ing.Status.LoadBalancer.Ingress) > 0 {
		lb := ing.Status.LoadBalancer.Ingress[0]
		host = lb.Hostname
		if host == "" {
			host = lb.IP
		}
	}
	if host == "" {
		return ""
	}
	scheme := "http://"
	if len(ing.Spec.TLS) > 0 {
		scheme = "https://"
	}
	return scheme + strings.TrimSuffix(host, ".")
}
