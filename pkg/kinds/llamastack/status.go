package llamastack

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	status.Observed
	// Replicas the spec asks for.
	Replicas int32
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
}

// healthCheck is upstream's HealthCheck condition from what the server said.
func healthCheck(info *serverInfo) metav1.Condition {
	switch {
	case info == nil:
		return status.False(TypeHealthCheck, ReasonHealthCheckFailed, HealthCheckPodsNotReady)
	case !info.Healthy:
		return status.False(TypeHealthCheck, ReasonHealthCheckFailed, "the server does not answer its health check: "+info.Problem)
	}
	return status.True(TypeHealthCheck, ReasonHealthCheckPassed, "the server answers GET /v1/health with OK")
}

// computeStatus computes the new status from the previous one and the
// observation: pure, and stable (an unchanged observation gives an
// identical status, lastTransitionTime included).
func computeStatus(prev llamav1alpha1.LlamaStackDistributionStatus, obs observed) llamav1alpha1.LlamaStackDistributionStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = obs.Generation
	s := obs.On(&st.Conditions)

	s.Set(obs.Reconciled())
	deploymentReady := s.Set(status.DeploymentCondition(obs.Deployment, obs.Replicas))
	serviceReady := s.Set(status.ServiceCondition(obs.ServiceFound))
	s.Set(status.StorageCondition(obs.StorageRequested, obs.Claim))
	s.Set(status.TrustCondition(obs.Trust))
	ready := s.Set(obs.Ready("Ready", "the server runs the current spec", deploymentReady, serviceReady))
	setHealthCheck(s, obs)
	setServerInfo(&st, obs.Server)
	// After Ready, so that it comes last whether the CR had it from the start or not.
	setAllowedFrom(s, obs.AllowedFrom)

	setEndpoints(&st, obs)
	setPhase(&st, obs, ready)
	setDistribution(&st, obs)
	return st
}

// setHealthCheck sets HealthCheck from what the server said: Unknown for a
// server that is never asked, as it was while its answer is on its way, and
// left as it was while the CR is deleted.
func setHealthCheck(s status.Conditions, o observed) {
	switch {
	case o.Deleting:
	case o.ServerRequiresClientCerts:
		s.Set(status.Unknown(TypeHealthCheck, ReasonHealthCheckNotAsked, HealthCheckClientCerts))
	case o.Server == nil && o.ServerAsked:
		// The answer is on its way: the condition stays until it comes.
		s.Keep(TypeHealthCheck, healthCheck(nil))
	default:
		s.Set(healthCheck(o.Server))
	}
}

// setServerInfo takes the server's version (when it says one) and
// providers from its answer; nothing without an answer.
func setServerInfo(st *llamav1alpha1.LlamaStackDistributionStatus, info *serverInfo) {
	if info == nil {
		return
	}
	if info.Version != "" {
		st.Version.LlamaStackServerVersion = info.Version
	}
	st.DistributionConfig.Providers = info.Providers
}

// setAllowedFrom sets AllowedFromValid, or removes it while
// spec.network.allowedFrom is not set (c nil).
func setAllowedFrom(s status.Conditions, c *metav1.Condition) {
	if c == nil {
		s.Remove(TypeAllowedFromValid)
		return
	}
	s.Set(*c)
}

// setEndpoints sets the available replicas and the server's URLs.
func setEndpoints(st *llamav1alpha1.LlamaStackDistributionStatus, o observed) {
	st.AvailableReplicas = 0
	if o.Deployment != nil {
		st.AvailableReplicas = o.Deployment.Status.AvailableReplicas
	}
	st.ServiceURL = o.ServiceURL
	st.RouteURL = o.RouteURL
}

// setPhase sets upstream's phase: Terminating, Failed, Ready, Initializing
// once the chart is applied, else Pending.
func setPhase(st *llamav1alpha1.LlamaStackDistributionStatus, o observed, ready metav1.Condition) {
	st.Phase = phases[o.Stage(ready)]
}

// phases are upstream's names of the stages.
var phases = map[status.Stage]llamav1alpha1.DistributionPhase{
	status.StageTerminating:  llamav1alpha1.PhaseTerminating,
	status.StageFailed:       llamav1alpha1.PhaseFailed,
	status.StageReady:        llamav1alpha1.PhaseReady,
	status.StageInitializing: llamav1alpha1.PhaseInitializing,
	status.StagePending:      llamav1alpha1.PhasePending,
}

// setDistribution sets the distributions and the operator's version,
// stamped when it changes.
func setDistribution(st *llamav1alpha1.LlamaStackDistributionStatus, o observed) {
	st.DistributionConfig.ActiveDistribution = o.ActiveDistribution
	st.DistributionConfig.AvailableDistributions = o.AvailableDistributions
	if st.Version.OperatorVersion != o.OperatorVersion {
		st.Version.OperatorVersion = o.OperatorVersion
		now := o.Now
		st.Version.LastUpdated = &now
	}
}

// Status implements release.Kind: it reads the rendered objects back (the
// Deployment, Service and PVC through the cache, a Route from the API
// server) and computes the status from them.
func (k *Kind) Status(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, in *Inputs, obs release.Observation) error {
	o := observe(cr, in, obs, k.OperatorVersion)
	var err error
	if o.Deployment, err = release.Rendered(ctx, k.Deps, cr.Namespace, obs, "Deployment", &appsv1.Deployment{}); err != nil {
		return err
	}
	if name := obs.Find("Service"); name != "" {
		svc, err := release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.Service{})
		if err != nil {
			return err
		}
		o.ServiceFound = svc != nil
	}
	// The server is asked only while its pods are ready for the
	// Deployment's current generation, at most once a minute.
	// A server that requires client certificates is not asked: the
	// operator has none to give (HealthCheck says so).
	o.ServerRequiresClientCerts = serves(cr) == servesMTLS
	if o.ServiceFound && o.ServiceURL != "" && !o.ServerRequiresClientCerts && o.Deployment != nil && o.Deployment.Status.AvailableReplicas > 0 && status.DeploymentCondition(o.Deployment, o.Replicas).Status == metav1.ConditionTrue {
		answer, known := k.servers().Info(cr.UID, fmt.Sprintf("%d %s", o.Deployment.Generation, o.ServiceURL), o.ServiceURL)
		info := infoOf(answer)
		o.Server, o.ServerAsked = &info, true
		if !known {
			o.Server = nil
		}
	}
	if name := obs.Find("PersistentVolumeClaim"); name != "" && o.StorageRequested != nil {
		if o.Claim, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.PersistentVolumeClaim{}); err != nil {
			return err
		}
	}
	if o.RouteURL, err = release.ExternalURL(ctx, k.Deps, cr.Namespace, obs); err != nil {
		return err
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}

// observe is what the status derives from the CR, its inputs and the
// reconcile, before the rendered objects are read back.
func observe(cr *llamav1alpha1.LlamaStackDistribution, in *Inputs, obs release.Observation, operatorVersion string) observed {
	o := observed{
		Observed:        status.Observed{Generation: cr.Generation, Failure: obs.Failure, Applied: obs.Applied, Deleting: obs.Deleting, Now: obs.Now},
		Replicas:        cr.Spec.Replicas,
		OperatorVersion: operatorVersion,
	}
	if as := cr.Spec.Server.Autoscaling; as != nil {
		// The HPA owns the count; ready means at least its minimum is available.
		o.Replicas = *podspec.HPAMinReplicas(cr.Spec.Replicas, as.MinReplicas, as.MaxReplicas)
	}
	o.AllowedFrom = allowedFromCondition(cr.Spec.Network)
	if in != nil {
		o.AvailableDistributions = in.settings.Distributions
		o.Trust = in.trust
	}
	// As upstream: the distribution's name, or "custom" for an image.
	o.ActiveDistribution = cr.Spec.Server.Distribution.Name
	if o.ActiveDistribution == "" {
		o.ActiveDistribution = "custom"
	}
	if name := obs.Find("Service"); name != "" {
		port := cr.Spec.Server.ContainerSpec.Port
		if port == 0 {
			port = llamav1alpha1.DefaultServerPort
		}
		scheme := "http"
		if serves(cr) != servesHTTP {
			scheme = "https"
		}
		o.ServiceURL = fmt.Sprintf("%s://%s.%s.svc.cluster.local:%d", scheme, name, cr.Namespace, port)
	}
	if st := cr.Spec.Server.Storage; st != nil {
		size := resource.MustParse(llamav1alpha1.DefaultStorageSize)
		if st.Size != nil {
			size = *st.Size
		}
		o.StorageRequested = &size
	}
	return o
}
