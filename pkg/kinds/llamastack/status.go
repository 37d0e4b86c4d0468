package llamastack

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	// Generation of the CR's spec.
	Generation int64
	// Replicas the spec asks for.
	Replicas int32
	// Deleting is true once the CR has a deletion timestamp.
	Deleting bool
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *status.Failure
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
	Trust trust.Outcome
	// OperatorVersion is this operator's version.
	OperatorVersion string
	// ActiveDistribution is the distribution name, or the image when given directly.
	ActiveDistribution string
	// AvailableDistributions is the distribution table.
	AvailableDistributions map[string]string
	// Server is what the server said of itself; nil when it was not asked
	// (its pods are not ready) or has not answered yet (ServerAsked).
	Server *serverInfo
	// ServerAsked is true when the server's pods are ready and it is asked:
	// until it answers, HealthCheck stays as it was.
	ServerAsked bool
	// ServerRequiresClientCerts is true when the server requires client
	// certificates (typed config tlsCAFile): it is never asked.
	ServerRequiresClientCerts bool
	// AllowedFrom is TypeAllowedFromValid; nil when spec.network.allowedFrom is not set.
	AllowedFrom *metav1.Condition
	// Now stamps new transitions.
	Now metav1.Time
}

// healthCheck is upstream's HealthCheck condition from what the server said.
func healthCheck(info *serverInfo) metav1.Condition {
	switch {
	case info == nil:
		return metav1.Condition{Type: TypeHealthCheck, Status: metav1.ConditionFalse, Reason: ReasonHealthCheckFailed, Message: HealthCheckPodsNotReady}
	case !info.Healthy:
		return metav1.Condition{Type: TypeHealthCheck, Status: metav1.ConditionFalse, Reason: ReasonHealthCheckFailed, Message: "the server does not answer its health check: " + info.Problem}
	}
	return metav1.Condition{Type: TypeHealthCheck, Status: metav1.ConditionTrue, Reason: ReasonHealthCheckPassed, Message: "the server answers GET /v1/health with OK"}
}

// computeStatus computes the new status from the previous one and the
// observation: pure, and stable (an unchanged observation gives an
// identical status, lastTransitionTime included).
func computeStatus(prev llamav1alpha1.LlamaStackDistributionStatus, obs observed) llamav1alpha1.LlamaStackDistributionStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = obs.Generation
	gen := obs.Generation

	reconciled := metav1.Condition{Type: status.TypeReconciled, Status: metav1.ConditionTrue, Reason: "ReleaseApplied", Message: "the chart is applied for the current spec"}
	if obs.Failure != nil {
		reconciled = metav1.Condition{Type: status.TypeReconciled, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: obs.Failure.Error()}
	}
	status.Set(&st.Conditions, reconciled, gen, obs.Now)

	deploymentReady := status.DeploymentCondition(obs.Deployment, obs.Replicas)
	status.Set(&st.Conditions, deploymentReady, gen, obs.Now)
	serviceReady := status.ServiceCondition(obs.ServiceFound)
	status.Set(&st.Conditions, serviceReady, gen, obs.Now)
	status.Set(&st.Conditions, status.StorageCondition(obs.StorageRequested, obs.Claim), gen, obs.Now)
	status.Set(&st.Conditions, status.TrustCondition(obs.Trust), gen, obs.Now)

	ready := metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "the server runs the current spec"}
	switch {
	case obs.Failure != nil:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: "the current spec is not applied: " + obs.Failure.Error()}
	case deploymentReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: deploymentReady.Reason, Message: deploymentReady.Message}
	case serviceReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: serviceReady.Reason, Message: serviceReady.Message}
	}
	status.Set(&st.Conditions, ready, gen, obs.Now)
	switch {
	case obs.Deleting:
	case obs.ServerRequiresClientCerts:
		status.Set(&st.Conditions, metav1.Condition{Type: TypeHealthCheck, Status: metav1.ConditionUnknown, Reason: ReasonHealthCheckNotAsked, Message: HealthCheckClientCerts}, gen, obs.Now)
	case obs.Server == nil && obs.ServerAsked:
		// The answer is on its way: the condition stays until it comes.
		if c := meta.FindStatusCondition(st.Conditions, TypeHealthCheck); c != nil {
			status.Set(&st.Conditions, *c, gen, obs.Now)
		} else {
			status.Set(&st.Conditions, healthCheck(nil), gen, obs.Now)
		}
	default:
		status.Set(&st.Conditions, healthCheck(obs.Server), gen, obs.Now)
	}
	if obs.Server != nil {
		if obs.Server.Version != "" {
			st.Version.LlamaStackServerVersion = obs.Server.Version
		}
		st.DistributionConfig.Providers = obs.Server.Providers
	}
	// After Ready, so that it comes last whether the CR had it from the start or not.
	if obs.AllowedFrom != nil {
		status.Set(&st.Conditions, *obs.AllowedFrom, gen, obs.Now)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypeAllowedFromValid)
	}

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
