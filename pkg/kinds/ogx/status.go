package ogx

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	Generation int64
	// Replicas the spec asks for (the HPA's minimum with autoscaling).
	Replicas int32
	Deleting bool
	// Failure is why the current spec could not be applied; nil when it was.
	Failure *status.Failure
	// Applied is true once a release of the chart exists.
	Applied bool
	// Deployment is the rendered Deployment as read back, nil when absent.
	Deployment   *appsv1.Deployment
	ServiceURL   string
	ServiceFound bool
	// ExternalURL is nil when external access is off.
	ExternalURL *string
	// StorageRequested is the spec's storage size; nil without storage.
	StorageRequested *resource.Quantity
	Claim            *corev1.PersistentVolumeClaim
	Trust            trust.Outcome
	OperatorVersion  string
	// ActiveDistribution is the distribution's name, or "custom" for an image.
	ActiveDistribution     string
	AvailableDistributions map[string]string
	// Image is the resolved image; "" when it could not be resolved.
	Image string
	// OverrideHash is the content hash of overrideConfig's key.
	OverrideHash string
	// Generated is the generated configuration; nil when none.
	Generated *generated
	// ConfigFailure is why the configuration could not be generated.
	ConfigFailure *status.Failure
	// Declarative is true when the spec asks for a generated configuration.
	Declarative bool
	// Adoption is what the adoption annotations found.
	Adoption adoption
	// Server is what the server said of itself; nil when not asked or
	// not answered yet (ServerAsked).
	Server      *stackserver.Answer
	ServerAsked bool
	Now         metav1.Time
}

// healthCheck is upstream's HealthCheck condition from what the server said.
func healthCheck(a *stackserver.Answer) metav1.Condition {
	c := metav1.Condition{Type: ogxv1beta1.ConditionTypeHealthCheck, Status: metav1.ConditionFalse, Reason: ogxv1beta1.ReasonHealthCheckFailed}
	switch {
	case a == nil:
		c.Message = "the server's pods are not ready"
	case !a.Healthy:
		c.Message = "the server does not answer its health check: " + a.Problem
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ogxv1beta1.ReasonHealthCheckPassed, "the server answers GET /v1/health with OK"
	}
	return c
}

// configCondition is upstream's ConfigGenerated condition.
func configCondition(obs observed) *metav1.Condition {
	c := metav1.Condition{Type: ogxv1beta1.ConditionTypeConfigGenerated}
	switch {
	case obs.ConfigFailure != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ogxv1beta1.ReasonConfigGenerationFailed, obs.ConfigFailure.Error()
	case obs.Generated != nil:
		c.Status, c.Reason = metav1.ConditionTrue, ogxv1beta1.ReasonConfigGenerationSucceeded
		c.Message = fmt.Sprintf("generated config.yaml (ConfigMap %s) with %d providers and %d resources", obs.Generated.ConfigMapName, obs.Generated.Providers, obs.Generated.Resources)
	case obs.Declarative:
		// Generated mode whose inputs were not read (the CR is deleted or
		// Gather failed before): the condition stays as it was.
		return nil
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ogxv1beta1.ReasonConfigGenerationInactive, "the configuration is not generated: spec.overrideConfig or the image's own configuration is used"
	}
	return &c
}

// computeStatus computes the new status from the previous one and the
// observation: pure, and stable (an unchanged observation gives an
// identical status, lastTransitionTime included).
func computeStatus(prev ogxv1beta1.OGXServerStatus, obs observed) ogxv1beta1.OGXServerStatus {
	st := *prev.DeepCopy()
	gen := obs.Generation
	set := func(c metav1.Condition) { status.Set(&st.Conditions, c, gen, obs.Now) }

	reconciled := metav1.Condition{Type: status.TypeReconciled, Status: metav1.ConditionTrue, Reason: "ReleaseApplied", Message: "the chart is applied for the current spec"}
	if obs.Failure != nil {
		reconciled = metav1.Condition{Type: status.TypeReconciled, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: obs.Failure.Error()}
	}
	set(reconciled)
	deploymentReady := status.DeploymentCondition(obs.Deployment, obs.Replicas)
	set(deploymentReady)
	serviceReady := status.ServiceCondition(obs.ServiceFound)
	set(serviceReady)
	if obs.StorageRequested != nil {
		set(status.StorageCondition(obs.StorageRequested, obs.Claim))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, status.TypeStorageReady)
	}
	set(status.TrustCondition(obs.Trust))
	if !obs.Deleting {
		for typ, c := range map[string]*metav1.Condition{
			ogxv1beta1.ConditionTypeAdoptionConfigInvalid: obs.Adoption.Invalid,
			ogxv1beta1.ConditionTypeNetworkingAdopted:     obs.Adoption.Networking,
		} {
			if c == nil {
				meta.RemoveStatusCondition(&st.Conditions, typ)
			}
		}
		for _, c := range []*metav1.Condition{obs.Adoption.Storage, obs.Adoption.Networking, obs.Adoption.Invalid} {
			if c != nil {
				set(*c)
			}
		}
	}
	if c := configCondition(obs); c != nil {
		set(*c)
	}

	ready := metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "the server runs the current spec"}
	switch {
	case obs.Failure != nil:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: obs.Failure.Reason, Message: "the current spec is not applied: " + obs.Failure.Error()}
	case deploymentReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: deploymentReady.Reason, Message: deploymentReady.Message}
	case obs.Adoption.Waiting && obs.Adoption.Storage != nil:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: ReasonAdoptionWaiting, Message: obs.Adoption.Storage.Message}
	case serviceReady.Status != metav1.ConditionTrue:
		ready = metav1.Condition{Type: status.TypeReady, Status: metav1.ConditionFalse, Reason: serviceReady.Reason, Message: serviceReady.Message}
	}
	set(ready)
	switch {
	case obs.Deleting:
	case obs.Server == nil && obs.ServerAsked:
		// The answer is on its way: the condition stays until it comes.
		if c := meta.FindStatusCondition(st.Conditions, ogxv1beta1.ConditionTypeHealthCheck); c != nil {
			set(*c)
		} else {
			set(healthCheck(nil))
		}
	default:
		set(healthCheck(obs.Server))
	}
	if a := obs.Server; a != nil {
		if a.Version != "" {
			st.Version.ServerVersion = a.Version
		}
		st.DistributionConfig.Providers = providersOf(a.Providers)
	}

	st.AvailableReplicas = 0
	if obs.Deployment != nil {
		st.AvailableReplicas = obs.Deployment.Status.ReadyReplicas
	}
	st.ServiceURL = obs.ServiceURL
	st.ExternalURL = obs.ExternalURL

	switch {
	case obs.Deleting:
		st.Phase = ogxv1beta1.OGXServerPhaseTerminating
	case obs.Failure != nil:
		st.Phase = ogxv1beta1.OGXServerPhaseFailed
	case ready.Status == metav1.ConditionTrue:
		st.Phase = ogxv1beta1.OGXServerPhaseReady
	case obs.Applied:
		st.Phase = ogxv1beta1.OGXServerPhaseInitializing
	default:
		st.Phase = ogxv1beta1.OGXServerPhasePending
	}

	st.DistributionConfig.ActiveDistribution = obs.ActiveDistribution
	st.DistributionConfig.AvailableDistributions = obs.AvailableDistributions
	if obs.Image != "" {
		rd := &ogxv1beta1.ResolvedDistributionStatus{Image: obs.Image}
		switch {
		case obs.Generated != nil:
			rd.ConfigSource, rd.ConfigHash = obs.Generated.BaseSource, obs.Generated.BaseHash
		case obs.OverrideHash != "":
			rd.ConfigSource, rd.ConfigHash = "override", obs.OverrideHash
		default:
			rd.ConfigSource = "image"
		}
		st.ResolvedDistribution = rd
	}
	switch g := obs.Generated; {
	case g != nil:
		cg := &ogxv1beta1.ConfigGenerationStatus{ObservedGeneration: gen, ConfigMapName: g.ConfigMapName, ProviderCount: g.Providers, ResourceCount: g.Resources, ConfigVersion: g.Version}
		if prev.ConfigGeneration != nil && prev.ConfigGeneration.ConfigMapName == g.ConfigMapName {
			cg.GeneratedAt = prev.ConfigGeneration.GeneratedAt
		} else {
			cg.GeneratedAt = obs.Now
		}
		st.ConfigGeneration = cg
	case !obs.Declarative && !obs.Deleting:
		st.ConfigGeneration = nil
	}
	if st.Version.OperatorVersion != obs.OperatorVersion {
		st.Version.OperatorVersion = obs.OperatorVersion
		st.Version.LastUpdated = obs.Now
	}
	return st
}

// providersOf is the server's providers in this API's types.
func providersOf(ps []stackserver.Provider) []ogxv1beta1.ProviderInfo {
	if ps == nil {
		return nil
	}
	out := make([]ogxv1beta1.ProviderInfo, 0, len(ps))
	for _, p := range ps {
		out = append(out, ogxv1beta1.ProviderInfo{
			API: p.API, ProviderID: p.ProviderID, ProviderType: p.ProviderType,
			Config: apiextensionsv1.JSON{Raw: p.Config},
			Health: ogxv1beta1.ProviderHealthStatus{Status: p.Health.Status, Message: p.Health.Message},
		})
	}
	return out
}
