package nemoguardrails

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// Condition types: upstream's (DeploymentReady, RouteReady,
// ReconcileComplete) and the operator's (Reconciled, Ready, TrustReady,
// MCPGatewayConfigured).
const (
	TypeRouteReady        = "RouteReady"
	TypeReconcileComplete = "ReconcileComplete"
	// TypeMCPGatewayConfigured is False while spec.template.pod.mcpGateway
	// asks for the EnvoyFilter this operator does not write (docs/trustyai.md).
	TypeMCPGatewayConfigured = "MCPGatewayConfigured"
)

// Phases (upstream's values).
const (
	PhaseReady       = "Ready"
	PhaseProgressing = "Progressing"
	PhaseError       = "Error"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	status.Observed
	Replicas int32
	// Deployment and Route as read back, nil when absent; RouteRendered and
	// Ingress say what the release renders.
	Deployment    *appsv1.Deployment
	Route         *unstructured.Unstructured
	RouteRendered bool
	Ingress       bool
	Trust         trust.Outcome
	OpenShift     bool
	// UserCA: spec.caBundleConfig is set. MCPGateway: spec.template.pod.mcpGateway is.
	UserCA, MCPGateway bool
	Namespace, Name    string
}

// computeStatus computes the new status from the previous one and the
// observation: pure and stable (an unchanged observation gives an identical
// status, lastTransitionTime included).
func computeStatus(prev nemov1alpha1.NemoGuardrailStatus, o observed) nemov1alpha1.NemoGuardrailStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = o.Generation
	s := o.On(&st.Conditions)
	s.Set(o.Reconciled())
	// Ready names every gate not True.
	gates := []metav1.Condition{s.Set(status.DeploymentCondition(o.Deployment, o.Replicas))}
	if c, ok := setRoute(s, o); ok {
		gates = append(gates, c)
	}
	s.Set(status.TrustCondition(o.Trust))
	setMCPGateway(s, &st, o.MCPGateway)
	st.CA = caStatus(o)
	ready := s.Set(o.ReadyAll("AllComponentsReady", "the server runs the current spec", gates...))
	s.Set(reconcileCompleteCondition(ready))
	setPhase(&st, o, ready)
	return st
}

// setRoute sets RouteReady (routeCondition), or removes it where nothing
// exposes the server; ok says Ready waits for it.
func setRoute(s status.Conditions, o observed) (gate metav1.Condition, ok bool) {
	c, ok := routeCondition(o)
	if !ok {
		s.Remove(TypeRouteReady)
		return gate, false
	}
	return s.Set(c), true
}

// routeCondition is RouteReady: the Route exists and a router admitted it;
// off OpenShift, the Ingress in its place exists. ok is false where nothing
// exposes the server and nothing is meant to (upstream requires a Route and
// never turns Ready without one; here Ready does not wait for it).
func routeCondition(o observed) (c metav1.Condition, ok bool) {
	switch {
	case o.RouteRendered && o.Route == nil:
		return status.False(TypeRouteReady, "RouteNotReady", "the Route does not exist yet"), true
	case o.RouteRendered && !status.RouteAdmitted(o.Route):
		return status.False(TypeRouteReady, "RouteNotReady", "no router has admitted the Route yet"), true
	case o.RouteRendered:
		return status.True(TypeRouteReady, "RouteReady", "the Route is admitted"), true
	case o.Ingress:
		return status.True(TypeRouteReady, "IngressCreated", "no Route API on this cluster: an Ingress exposes the server"), true
	}
	return c, false
}

// setMCPGateway sets MCPGatewayConfigured False and upstream's status.mcp
// while spec.template.pod.mcpGateway asks for the EnvoyFilter this operator
// does not write; otherwise it removes both, and status.bbrPlugin.
func setMCPGateway(s status.Conditions, st *nemov1alpha1.NemoGuardrailStatus, asked bool) {
	if !asked {
		s.Remove(TypeMCPGatewayConfigured)
		st.MCP, st.BBRPlugin = nil, nil
		return
	}
	s.Set(status.False(TypeMCPGatewayConfigured, "NotSupported", "spec.template.pod.mcpGateway: this operator does not write upstream's EnvoyFilter mcp-sse-strip, which goes in the gateway's namespace, outside this resource's; the server runs without it (docs/trustyai.md says how an administrator adds it)"))
	st.MCP = &nemov1alpha1.MCPGatewayStatus{MCPGatewayFound: false, MCPGatewayError: "not configured by this operator: the EnvoyFilter mcp-sse-strip goes in the gateway's namespace (docs/trustyai.md)"}
}

// reconcileCompleteCondition is upstream's ReconcileComplete: Ready in its
// words.
func reconcileCompleteCondition(ready metav1.Condition) metav1.Condition {
	if ready.Status != metav1.ConditionTrue {
		return status.False(TypeReconcileComplete, "ReconcileFailed", ready.Message)
	}
	return status.True(TypeReconcileComplete, "ReconcileCompleted", "Reconcile completed successfully")
}

// setPhase sets upstream's phase: Ready, Error while the current spec is
// not applied, Progressing otherwise.
func setPhase(st *nemov1alpha1.NemoGuardrailStatus, o observed, ready metav1.Condition) {
	switch {
	case ready.Status == metav1.ConditionTrue:
		st.Phase = PhaseReady
	case o.Failure != nil:
		st.Phase = PhaseError
	default:
		st.Phase = PhaseProgressing
	}
}

// caStatus is upstream's status.ca: which CA sources were merged.
func caStatus(o observed) *nemov1alpha1.CAStatus {
	has := func(name string) bool {
		return slices.Contains(o.Trust.Sources, "ConfigMap "+o.Namespace+"/"+name)
	}
	ca := &nemov1alpha1.CAStatus{ODHTrustedCAFound: has(trust.ODHBundle), OpenshiftServingCAFound: o.OpenShift && has(serviceCAName(o.Name))}
	if !ca.ODHTrustedCAFound {
		ca.ODHTrustedCAError = fmt.Sprintf("ConfigMap %s/%s was not found", o.Namespace, trust.ODHBundle)
	}
	if !ca.OpenshiftServingCAFound {
		ca.OpenshiftServingCAError = "not on OpenShift: no service CA is injected"
		if o.OpenShift {
			ca.OpenshiftServingCAError = fmt.Sprintf("ConfigMap %s/%s holds no service CA yet", o.Namespace, serviceCAName(o.Name))
		}
	}
	if o.UserCA {
		ca.UserCAFound = o.Trust.Reason != trust.ReasonConfigMapNotFound && o.Trust.Reason != trust.ReasonCrossNamespaceRefused
		if !ca.UserCAFound {
			ca.UserCAError = o.Trust.Message
		}
	}
	return ca
}

// Status implements release.Kind: the Deployment through the cache, the
// Route from the API server.
func (k *Kind) Status(ctx context.Context, cr *nemov1alpha1.NemoGuardrails, in *Inputs, obs release.Observation) error {
	o := observed{
		Observed: status.Observed{Generation: cr.Generation, Failure: obs.Failure, Applied: obs.Applied, Now: obs.Now},
		Replicas: replicas(cr), RouteRendered: obs.Find("Route") != "", Ingress: obs.Find("Ingress") != "",
		MCPGateway: cr.Spec.Template != nil && cr.Spec.Template.Pod != nil && cr.Spec.Template.Pod.MCPGateway != nil,
		UserCA:     cr.Spec.CABundleConfig != nil, Namespace: cr.Namespace, Name: cr.Name,
	}
	if in != nil {
		o.Trust, o.OpenShift = in.trust, in.values.Platform.OpenShift
	}
	var err error
	if o.Deployment, err = release.Rendered(ctx, k.Deps, cr.Namespace, obs, "Deployment", &appsv1.Deployment{}); err != nil {
		return err
	}
	if name := obs.Find("Route"); name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(platform.Route)
		if o.Route, err = release.GetOptional(ctx, k.APIReader, cr.Namespace, name, u); err != nil {
			return err
		}
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}
