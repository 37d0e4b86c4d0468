package status

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// LlamaStackObserved is what the controller saw in one reconcile.
type LlamaStackObserved struct {
	// Generation of the CR's spec.
	Generation int64
	// Replicas the spec asks for.
	Replicas int32
	// Deleting is true once the CR has a deletion timestamp.
	Deleting bool
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *Failure
	// Applied is true once a release of the chart exists (now or earlier).
	Applied bool
	// Deployment is the rendered Deployment as read back, nil when absent.
	Deployment *appsv1.Deployment
	// ServiceURL is the in-cluster URL of the server.
	ServiceURL string
	// ServiceFound is true when the rendered Service exists.
	ServiceFound bool
	// RouteURL is the external URL, when exposed and known.
	RouteURL string
	// StorageRequested is the spec's storage size; nil when no storage is asked for.
	StorageRequested *resource.Quantity
	// Claim is the rendered PVC as read back, nil when absent.
	Claim *corev1.PersistentVolumeClaim
	// Trust is the outcome of merging the CA sources.
	Trust TrustObservation
	// OperatorVersion is this operator's version.
	OperatorVersion string
	// ActiveDistribution is the distribution name, or the image when given directly.
	ActiveDistribution string
	// AvailableDistributions is the distribution table.
	AvailableDistributions map[string]string
	// Now stamps new transitions.
	Now metav1.Time
}

// LlamaStack computes the new status from the previous one and the observation.
func LlamaStack(prev llamav1alpha1.LlamaStackDistributionStatus, obs LlamaStackObserved) llamav1alpha1.LlamaStackDistributionStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = obs.Generation
	gen := obs.Generation

	reconciled := metav1.Condition{Type: TypeReconciled, Status: metav1.ConditionTrue, Reason: "ReleaseApplied", Message: "the chart is applied for the current spec"}
	if obs.Failure != nil {
		reconciled = metav1.Condition{Type: TypeReconciled, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: obs.Failure.Message}
	}
	setCondition(&st.Conditions, reconciled, gen, obs.Now)

	deploymentReady := deploymentCondition(obs.Deployment, obs.Replicas)
	setCondition(&st.Conditions, deploymentReady, gen, obs.Now)
	serviceReady := metav1.Condition{Type: TypeServiceReady, Status: metav1.ConditionTrue, Reason: "ServiceCreated", Message: "the Service exists"}
	if !obs.ServiceFound {
		serviceReady.Status, serviceReady.Reason, serviceReady.Message = metav1.ConditionFalse, "ServiceNotFound", "the Service does not exist yet"
	}
	setCondition(&st.Conditions, serviceReady, gen, obs.Now)
	setCondition(&st.Conditions, storageCondition(obs.StorageRequested, obs.Claim), gen, obs.Now)
	setCondition(&st.Conditions, trustCondition(obs.Trust), gen, obs.Now)

	ready := metav1.Condition{Type: TypeReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "the server runs the current spec"}
	switch {
	case obs.Failure != nil:
		ready = metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: "the current spec is not applied: " + obs.Failure.Message}
	case deploymentReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: deploymentReady.Reason, Message: deploymentReady.Message}
	case serviceReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: serviceReady.Reason, Message: serviceReady.Message}
	}
	setCondition(&st.Conditions, ready, gen, obs.Now)

	st.AvailableReplicas = 0
	if obs.Deployment != nil {
		st.AvailableReplicas = obs.Deployment.Status.AvailableReplicas
	}
	st.ServiceURL = obs.ServiceURL
	st.RouteURL = obs.RouteURL

	switch {
	case obs.Deleting:
		st.Phase = llamav1alpha1.PhaseTerminating
	case obs.Failure != nil:
		st.Phase = llamav1alpha1.PhaseFailed
	case ready.Status == metav1.ConditionTrue:
		st.Phase = llamav1alpha1.PhaseReady
	case obs.Applied:
		st.Phase = llamav1alpha1.PhaseInitializing
	default:
		st.Phase = llamav1alpha1.PhasePending
	}

	st.DistributionConfig.ActiveDistribution = obs.ActiveDistribution
	st.DistributionConfig.AvailableDistributions = obs.AvailableDistributions
	if st.Version.OperatorVersion != obs.OperatorVersion {
		st.Version.OperatorVersion = obs.OperatorVersion
		now := obs.Now
		st.Version.LastUpdated = &now
	}
	return st
}

// TrustObservation is the outcome of merging the CA sources of a CR.
type TrustObservation struct {
	// Wanted is true when some CA source applies, so a bundle is mounted.
	Wanted bool
	// Certificates in the merged bundle, and the sources merged.
	Certificates int
	Sources      []string
	// FailureReason and FailureMessage are set when the merge failed.
	FailureReason, FailureMessage string
	// LastGoodMounted is true when a failure leaves an earlier bundle mounted.
	LastGoodMounted bool
}

func trustCondition(t TrustObservation) metav1.Condition {
	c := metav1.Condition{Type: TypeTrustReady}
	switch {
	case t.FailureReason != "":
		c.Status, c.Reason = metav1.ConditionFalse, t.FailureReason
		c.Message = t.FailureMessage
		if t.LastGoodMounted {
			c.Message += "; the last good bundle stays mounted and nothing restarts"
		} else {
			c.Message += "; no bundle is mounted until this is fixed"
		}
	case !t.Wanted:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "NoCustomTrust", "no CA source applies; the image's own trust store is used"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, "BundleMerged"
		c.Message = fmt.Sprintf("%d certificates merged from %s", t.Certificates, strings.Join(t.Sources, ", "))
	}
	return c
}

func storageCondition(requested *resource.Quantity, claim *corev1.PersistentVolumeClaim) metav1.Condition {
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

func deploymentCondition(d *appsv1.Deployment, desired int32) metav1.Condition {
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
