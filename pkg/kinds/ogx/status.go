package ogx

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/configgen"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	status.Observed
	// Replicas the spec asks for (the HPA's minimum with autoscaling).
	Replicas int32
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
}

// healthCheck is upstream's HealthCheck condition from what the server said.
func healthCheck(a *stackserver.Answer) metav1.Condition {
	switch {
	case a == nil:
		return status.False(ogxv1beta1.ConditionTypeHealthCheck, ogxv1beta1.ReasonHealthCheckFailed, "the server's pods are not ready")
	case !a.Healthy:
		return status.False(ogxv1beta1.ConditionTypeHealthCheck, ogxv1beta1.ReasonHealthCheckFailed, "the server does not answer its health check: "+a.Problem)
	}
	return status.True(ogxv1beta1.ConditionTypeHealthCheck, ogxv1beta1.ReasonHealthCheckPassed, "the server answers GET /v1/health with OK")
}

// computeStatus computes the new status from the previous one and the
// observation: pure, and stable (an unchanged observation gives an
// identical status, lastTransitionTime included).
func computeStatus(prev ogxv1beta1.OGXServerStatus, obs observed) ogxv1beta1.OGXServerStatus {
	st := *prev.DeepCopy()
	s := obs.On(&st.Conditions)

	s.Set(obs.Reconciled())
	deploymentReady := s.Set(status.DeploymentCondition(obs.Deployment, obs.Replicas))
	serviceReady := s.Set(status.ServiceCondition(obs.ServiceFound))
	setStorage(s, obs)
	s.Set(status.TrustCondition(obs.Trust))
	setAdoption(s, obs)
	setConfigGenerated(s, obs)
	ready := s.Set(obs.Ready("Ready", "the server runs the current spec", readyGates(obs, deploymentReady, serviceReady)...))
	setHealthCheck(s, obs)
	setServerInfo(&st, obs.Server)

	setEndpoints(&st, obs)
	setPhase(&st, obs, ready)
	setDistribution(&st, obs)
	setConfigGeneration(&st, obs)
	setOperatorVersion(&st, obs)
	return st
}

// setStorage sets StorageReady, or removes it while no storage is asked for.
func setStorage(s status.Conditions, o observed) {
	if o.StorageRequested == nil {
		s.Remove(status.TypeStorageReady)
		return
	}
	s.Set(status.StorageCondition(o.StorageRequested, o.Claim))
}

// setAdoption sets the conditions of the adoption annotations, and removes
// AdoptionConfigInvalid and NetworkingAdopted when there is nothing to say;
// while the CR is deleted they stay as they were.
func setAdoption(s status.Conditions, o observed) {
	if o.Deleting {
		return
	}
	a := o.Adoption
	for _, r := range []struct {
		typ string
		c   *metav1.Condition
	}{
		{ogxv1beta1.ConditionTypeAdoptionConfigInvalid, a.Invalid},
		{ogxv1beta1.ConditionTypeNetworkingAdopted, a.Networking},
	} {
		if r.c == nil {
			s.Remove(r.typ)
		}
	}
	for _, c := range []*metav1.Condition{a.Storage, a.Networking, a.Invalid} {
		if c != nil {
			s.Set(*c)
		}
	}
}

// setConfigGenerated sets upstream's ConfigGenerated condition.
func setConfigGenerated(s status.Conditions, o observed) {
	const typ = ogxv1beta1.ConditionTypeConfigGenerated
	switch {
	case o.ConfigFailure != nil:
		s.Set(status.False(typ, ogxv1beta1.ReasonConfigGenerationFailed, o.ConfigFailure.Error()))
	case o.Generated != nil:
		s.Set(status.True(typ, ogxv1beta1.ReasonConfigGenerationSucceeded,
			fmt.Sprintf("generated config.yaml (ConfigMap %s) with %d providers and %d resources", o.Generated.ConfigMapName, o.Generated.Providers, o.Generated.Resources)))
	case o.Declarative:
		// Generated mode whose inputs were not read (the CR is deleted or
		// Gather failed before): the condition stays as it was.
	default:
		s.Set(status.False(typ, ogxv1beta1.ReasonConfigGenerationInactive, "the configuration is not generated: spec.overrideConfig or the image's own configuration is used"))
	}
}

// readyGates are Ready's gates, in order: the Deployment, the adopted
// claim's wait for the old server (while it waits), the Service.
func readyGates(o observed, deploymentReady, serviceReady metav1.Condition) []metav1.Condition {
	gates := []metav1.Condition{deploymentReady}
	if o.Adoption.Waiting && o.Adoption.Storage != nil {
		gates = append(gates, status.False(ogxv1beta1.ConditionTypeStorageAdopted, ReasonAdoptionWaiting, o.Adoption.Storage.Message))
	}
	return append(gates, serviceReady)
}

// setHealthCheck sets HealthCheck from what the server said: as it was
// while its answer is on its way, and left as it was while the CR is
// deleted.
func setHealthCheck(s status.Conditions, o observed) {
	switch {
	case o.Deleting:
	case o.Server == nil && o.ServerAsked:
		// The answer is on its way: the condition stays until it comes.
		s.Keep(ogxv1beta1.ConditionTypeHealthCheck, healthCheck(nil))
	default:
		s.Set(healthCheck(o.Server))
	}
}

// setServerInfo takes the server's version (when it says one) and
// providers from its answer; nothing without an answer.
func setServerInfo(st *ogxv1beta1.OGXServerStatus, a *stackserver.Answer) {
	if a == nil {
		return
	}
	if a.Version != "" {
		st.Version.ServerVersion = a.Version
	}
	st.DistributionConfig.Providers = providersOf(a.Providers)
}

// setEndpoints sets the ready replicas and the server's URLs.
func setEndpoints(st *ogxv1beta1.OGXServerStatus, o observed) {
	st.AvailableReplicas = 0
	if o.Deployment != nil {
		st.AvailableReplicas = o.Deployment.Status.ReadyReplicas
	}
	st.ServiceURL = o.ServiceURL
	st.ExternalURL = o.ExternalURL
}

// setPhase sets upstream's phase: Terminating, Failed, Ready, Initializing
// once the chart is applied, else Pending.
func setPhase(st *ogxv1beta1.OGXServerStatus, o observed, ready metav1.Condition) {
	st.Phase = phases[o.Stage(ready)]
}

// phases are upstream's names of the stages.
var phases = map[status.Stage]ogxv1beta1.OGXServerPhase{
	status.StageTerminating:  ogxv1beta1.OGXServerPhaseTerminating,
	status.StageFailed:       ogxv1beta1.OGXServerPhaseFailed,
	status.StageReady:        ogxv1beta1.OGXServerPhaseReady,
	status.StageInitializing: ogxv1beta1.OGXServerPhaseInitializing,
	status.StagePending:      ogxv1beta1.OGXServerPhasePending,
}

// setDistribution sets the distributions and, once the image is resolved,
// the image and where its configuration comes from.
func setDistribution(st *ogxv1beta1.OGXServerStatus, o observed) {
	st.DistributionConfig.ActiveDistribution = o.ActiveDistribution
	st.DistributionConfig.AvailableDistributions = o.AvailableDistributions
	if o.Image == "" {
		return
	}
	rd := &ogxv1beta1.ResolvedDistributionStatus{Image: o.Image}
	switch {
	case o.Generated != nil:
		rd.ConfigSource, rd.ConfigHash = o.Generated.BaseSource, o.Generated.BaseHash
	case o.OverrideHash != "":
		rd.ConfigSource, rd.ConfigHash = "override", o.OverrideHash
	default:
		rd.ConfigSource = "image"
	}
	st.ResolvedDistribution = rd
}

// setConfigGeneration sets status.configGeneration from the generated
// configuration (generatedAt moves only with a new ConfigMap); it is
// cleared without generation, and stays while generated mode's inputs were
// not read.
func setConfigGeneration(st *ogxv1beta1.OGXServerStatus, o observed) {
	switch g := o.Generated; {
	case g != nil:
		cg := &ogxv1beta1.ConfigGenerationStatus{ObservedGeneration: o.Generation, ConfigMapName: g.ConfigMapName, ProviderCount: g.Providers, ResourceCount: g.Resources, ConfigVersion: g.Version}
		if prev := st.ConfigGeneration; prev != nil && prev.ConfigMapName == g.ConfigMapName {
			cg.GeneratedAt = prev.GeneratedAt
		} else {
			cg.GeneratedAt = o.Now
		}
		st.ConfigGeneration = cg
	case !o.Declarative && !o.Deleting:
		st.ConfigGeneration = nil
	}
}

// setOperatorVersion sets the operator's version, stamped when it changes.
func setOperatorVersion(st *ogxv1beta1.OGXServerStatus, o observed) {
	if st.Version.OperatorVersion != o.OperatorVersion {
		st.Version.OperatorVersion = o.OperatorVersion
		st.Version.LastUpdated = o.Now
	}
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

// Status implements release.Kind: it reads the rendered objects back and
// computes the status from them.
func (k *Kind) Status(ctx context.Context, cr *ogxv1beta1.OGXServer, in *Inputs, obs release.Observation) error {
	o := observe(cr, in, obs, k.OperatorVersion)
	var err error
	if o.Deployment, err = release.Rendered(ctx, k.Deps, cr.Namespace, obs, "Deployment", &appsv1.Deployment{}); err != nil {
		return err
	}
	if name := ownService(cr, obs); name != "" {
		svc, err := release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.Service{})
		if err != nil {
			return err
		}
		o.ServiceFound = svc != nil
	}
	if o.ServiceFound && o.ServiceURL != "" && o.Deployment != nil && o.Deployment.Status.ReadyReplicas > 0 && status.DeploymentCondition(o.Deployment, o.Replicas).Status == metav1.ConditionTrue {
		answer, known := k.servers().Info(cr.UID, fmt.Sprintf("%d %s", o.Deployment.Generation, o.ServiceURL), o.ServiceURL)
		o.ServerAsked = true
		if known {
			o.Server = &answer
		}
	}
	if in != nil && in.adoption.Claim != "" {
		// The adopted claim is not labelled as the operator's: read it from
		// the API server; what it holds is what is asked.
		if o.Claim, err = release.GetOptional(ctx, k.APIReader, cr.Namespace, in.adoption.Claim, &corev1.PersistentVolumeClaim{}); err != nil {
			return err
		}
		if o.Claim != nil {
			o.StorageRequested = ptr.To(o.Claim.Spec.Resources.Requests[corev1.ResourceStorage])
		}
	} else if name := obs.Find("PersistentVolumeClaim"); name != "" && o.StorageRequested != nil {
		if o.Claim, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.PersistentVolumeClaim{}); err != nil {
			return err
		}
	}
	if n := cr.Spec.Network; n != nil && n.ExternalAccess != nil && n.ExternalAccess.Enabled {
		url, err := release.ExternalURL(ctx, k.Deps, cr.Namespace, obs)
		if err != nil {
			return err
		}
		o.ExternalURL = &url
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}

// observe is what the status derives from the CR, its inputs and the
// reconcile, before the rendered objects are read back.
func observe(cr *ogxv1beta1.OGXServer, in *Inputs, obs release.Observation, operatorVersion string) observed {
	spec := cr.Spec
	o := observed{
		Observed:        status.Observed{Generation: cr.Generation, Failure: obs.Failure, Applied: obs.Applied, Deleting: obs.Deleting, Now: obs.Now},
		Replicas:        1,
		OperatorVersion: operatorVersion,
		Declarative:     spec.OverrideConfig == nil && configgen.Active(&spec),
	}
	if w := spec.Workload; w != nil {
		if w.Replicas != nil {
			o.Replicas = *w.Replicas
		}
		if as := w.Autoscaling; as != nil {
			// The HPA owns the count; ready means at least its minimum is available.
			o.Replicas = *podspec.HPAMinReplicas(o.Replicas, as.MinReplicas, as.MaxReplicas)
		}
		if st := w.Storage; st != nil {
			size := ogxv1beta1.DefaultStorageSize.DeepCopy()
			if st.Size != nil {
				size = st.Size.DeepCopy()
			}
			o.StorageRequested = &size
		}
	}
	if in != nil {
		o.AvailableDistributions = in.settings.Distributions
		o.Trust = in.trust
		o.Generated = in.values.Generated
		o.OverrideHash = in.values.OverrideHash
		o.ConfigFailure = in.configFailure
		o.Image, _ = imageOf(spec.Distribution.Name, spec.Distribution.Image, in.settings.Distributions)
		o.Adoption = in.adoption
		if in.adoption.Waiting {
			o.Replicas = 0
		}

	}
	o.ActiveDistribution = spec.Distribution.Name
	if o.ActiveDistribution == "" {
		o.ActiveDistribution = "custom"
	}
	if name := ownService(cr, obs); name != "" {
		port := ogxv1beta1.DefaultServerPort
		if n := spec.Network; n != nil && n.Port != 0 {
			port = n.Port
		}
		scheme := "http"
		if in != nil && ((in.values.Generated != nil && spec.Network != nil && spec.Network.TLS != nil) || (spec.OverrideConfig != nil && in.values.OverrideServesTLS && spec.Network != nil && spec.Network.TLS != nil)) {
			scheme = "https"
		}
		o.ServiceURL = fmt.Sprintf("%s://%s.%s.svc.cluster.local:%d", scheme, name, cr.Namespace, port)
	}
	return o
}

// ownService is the server's own Service when the release renders it ("" when
// not): the release may render adopted Service names too.
func ownService(cr *ogxv1beta1.OGXServer, obs release.Observation) string {
	name := serviceName(cr.Name)
	for _, o := range obs.Objects {
		if o.Kind == "Service" && o.Name == name {
			return name
		}
	}
	return ""
}
