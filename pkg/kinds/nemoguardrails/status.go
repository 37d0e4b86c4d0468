package nemoguardrails

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
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
	Generation int64
	Replicas   int32
	Failure    *status.Failure
	Applied    bool
	Now        metav1.Time
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

// cond is status.Cond.
var cond = status.Cond

// computeStatus computes the new status from the previous one and the
// observation: pure and stable (an unchanged observation gives an identical
// status, lastTransitionTime included).
func computeStatus(prev nemov1alpha1.NemoGuardrailStatus, o observed) nemov1alpha1.NemoGuardrailStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = o.Generation
	set := func(c metav1.Condition) metav1.Condition {
		status.Set(&st.Conditions, c, o.Generation, o.Now)
		return c
	}
	reconciled := cond(status.TypeReconciled, true, "ReleaseApplied", "the chart is applied for the current spec")
	if o.Failure != nil {
		reconciled = cond(status.TypeReconciled, false, o.Failure.Reason, o.Failure.Error())
	}
	set(reconciled)

	var notReady []metav1.Condition
	if d := set(status.DeploymentCondition(o.Deployment, o.Replicas)); d.Status != metav1.ConditionTrue {
		notReady = append(notReady, d)
	}
	if route, ok := routeCondition(o); !ok {
		meta.RemoveStatusCondition(&st.Conditions, TypeRouteReady)
	} else if set(route).Status != metav1.ConditionTrue {
		notReady = append(notReady, route)
	}
	set(status.TrustCondition(o.Trust))
	if o.MCPGateway {
		set(cond(TypeMCPGatewayConfigured, false, "NotSupported", "spec.template.pod.mcpGateway: this operator does not write upstream's EnvoyFilter mcp-sse-strip, which goes in the gateway's namespace, outside this resource's; the server runs without it (docs/trustyai.md says how an administrator adds it)"))
		st.MCP = &nemov1alpha1.MCPGatewayStatus{MCPGatewayFound: false, MCPGatewayError: "not configured by this operator: the EnvoyFilter mcp-sse-strip goes in the gateway's namespace (docs/trustyai.md)"}
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypeMCPGatewayConfigured)
		st.MCP, st.BBRPlugin = nil, nil
	}
	st.CA = caStatus(o)

	ready := cond(status.TypeReady, true, "AllComponentsReady", "the server runs the current spec")
	switch {
	case o.Failure != nil:
		ready = cond(status.TypeReady, false, o.Failure.Reason, "the current spec is not applied: "+o.Failure.Error())
	case len(notReady) > 0:
		var parts []string
		for _, c := range notReady {
			parts = append(parts, c.Type+": "+c.Message)
		}
		ready = cond(status.TypeReady, false, "ComponentsNotReady", strings.Join(parts, "; "))
	}
	set(ready)
	if ready.Status == metav1.ConditionTrue {
		set(cond(TypeReconcileComplete, true, "ReconcileCompleted", "Reconcile completed successfully"))
	} else {
		set(cond(TypeReconcileComplete, false, "ReconcileFailed", ready.Message))
	}
	switch {
	case ready.Status == metav1.ConditionTrue:
		st.Phase = PhaseReady
	case o.Failure != nil:
		st.Phase = PhaseError
	default:
		st.Phase = PhaseProgressing
	}
	return st
}

// routeCondition is RouteReady: the Route exists and a router admitted it;
// off OpenShift, the Ingress in its place exists. ok is false where nothing
// exposes the server and nothing is meant to (upstream requires a Route and
// never turns Ready without one; here Ready does not wait for it).
func routeCondition(o observed) (c metav1.Condition, ok bool) {
	switch {
	case o.RouteRendered && o.Route == nil:
		return cond(TypeRouteReady, false, "RouteNotReady", "the Route does not exist yet"), true
	case o.RouteRendered && !status.RouteAdmitted(o.Route):
		return cond(TypeRouteReady, false, "RouteNotReady", "no router has admitted the Route yet"), true
	case o.RouteRendered:
		return cond(TypeRouteReady, true, "RouteReady", "the Route is admitted"), true
	case o.Ingress:
		return cond(TypeRouteReady, true, "IngressCreated", "no Route API on this cluster: an Ingress exposes the server"), true
	}
	return metav1.Condition{}, false
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
