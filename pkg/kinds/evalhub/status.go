package evalhub

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// Condition types besides status' shared ones: whether every provider and
// collection the spec lists has a definition (warnings: the server runs
// with those found).
const (
	TypeProvidersReady   = "ProvidersReady"
	TypeCollectionsReady = "CollectionsReady"
	// TypeTenantsReady says whether every object of the grants (in the
	// EvalHub's namespace and its tenants') is written.
	TypeTenantsReady = "TenantsReady"
)

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	Generation int64
	Spec       evalhubv1.EvalHubSpec
	Failure    *status.Failure
	Now        metav1.Time
	// Gathered: the inputs were read (Missing* and Trust are meaningful).
	Gathered                             bool
	MissingProviders, MissingCollections []int
	Trust                                trust.Outcome
	// Deployment and MCPDeployment as read back, nil when absent;
	// MCPRendered says the release renders the MCP server.
	Deployment, MCPDeployment *appsv1.Deployment
	MCPRendered               bool
	Namespace, Name           string
	// Grants is what Finish wrote, nil when it did not run.
	Grants *GrantResult
}

// cond is status.Cond.
var cond = status.Cond

// serverReady is upstream's readiness: some replicas ready, all of them.
func serverReady(d *appsv1.Deployment) bool {
	return d != nil && d.Status.ReadyReplicas > 0 && d.Status.ReadyReplicas == d.Status.Replicas && d.Status.ObservedGeneration >= d.Generation
}

// computeStatus computes the new status from the previous one and the
// observation: pure and stable (an unchanged observation gives an identical
// status, lastTransitionTime and lastUpdateTime included).
func computeStatus(prev evalhubv1.EvalHubStatus, o observed) evalhubv1.EvalHubStatus {
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
	set(status.DeploymentCondition(o.Deployment, replicas(o.Spec)))
	if o.Gathered {
		set(status.TrustCondition(o.Trust))
		set(definitionsCondition(TypeProvidersReady, "provider", "spec.providers", LabelProviderType, LabelProviderName, o.Spec.Providers, o.MissingProviders))
		set(definitionsCondition(TypeCollectionsReady, "collection", "spec.collections", LabelCollectionType, LabelCollectionName, o.Spec.Collections, o.MissingCollections))
		st.ActiveProviders = found(o.Spec.Providers, o.MissingProviders)
		st.ActiveCollections = found(o.Spec.Collections, o.MissingCollections)
	}

	if g := o.Grants; g != nil {
		st.TenantNamespaces = g.Tenants
		if len(g.Problems) == 0 {
			set(cond(TypeTenantsReady, true, "GrantsWritten", fmt.Sprintf("the permissions of the server and its jobs are written in its namespace and %d tenant namespaces", len(g.Tenants))))
		} else {
			set(cond(TypeTenantsReady, false, "GrantsIncomplete", strings.Join(g.Problems, "; ")))
		}
	}
	if d := o.Deployment; d != nil {
		st.Replicas, st.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
	} else {
		st.Replicas, st.ReadyReplicas = 0, 0
	}
	var ready metav1.Condition
	switch {
	case o.Failure != nil:
		ready = cond(status.TypeReady, false, o.Failure.Reason, "the current spec is not applied: "+o.Failure.Error())
	case o.Deployment == nil:
		ready = cond(status.TypeReady, false, "DeploymentNotFound", "Deployment not found")
	case !serverReady(o.Deployment):
		ready = cond(status.TypeReady, false, "DeploymentNotReady", fmt.Sprintf("Waiting for deployment to be ready (%d/%d replicas ready)", o.Deployment.Status.ReadyReplicas, o.Deployment.Status.Replicas))
	default:
		ready = cond(status.TypeReady, true, "DeploymentReady", "All replicas are ready")
	}
	set(ready)
	st.Ready = corev1.ConditionStatus(ready.Status)
	switch {
	case ready.Status == metav1.ConditionTrue:
		st.Phase = evalhubv1.PhaseReady
		st.URL = serviceURL(o.Name, o.Namespace)
	case o.Failure != nil:
		st.Phase = evalhubv1.PhaseError
	default:
		st.Phase = evalhubv1.PhasePending
	}
	st.MCP = mcpStatus(prev.MCP, o)

	// lastUpdateTime moves only when something else did.
	before, after := prev.DeepCopy(), st.DeepCopy()
	before.LastUpdateTime, after.LastUpdateTime = nil, nil
	if !equality.Semantic.DeepEqual(before, after) || st.LastUpdateTime == nil {
		now := o.Now
		st.LastUpdateTime = &now
	}
	return st
}

// definitionsCondition says which listed names have no definition, and how
// to add one.
func definitionsCondition(t, what, field, typeLabel, nameLabel string, names []string, missing []int) metav1.Condition {
	if len(missing) == 0 {
		return cond(t, true, "AllFound", fmt.Sprintf("every %s listed in %s has a definition", what, field))
	}
	var parts []string
	for _, i := range missing {
		parts = append(parts, fmt.Sprintf("%s[%d] %s", field, i, status.Quote(names[i])))
	}
	return cond(t, false, strings.ToUpper(what[:1])+what[1:]+"NotFound", fmt.Sprintf("%s: no ConfigMap labelled %s=system and %s=<name> in the operator's namespace; the server runs without it. Install the definition there (upstream's config/configmaps/evalhub) or remove the entry", strings.Join(parts, ", "), typeLabel, nameLabel))
}

// found lists names without the missing indexes, in order; nil for none.
func found(names []string, missing []int) []string {
	skip := map[int]bool{}
	for _, i := range missing {
		skip[i] = true
	}
	var out []string
	for i, n := range names {
		if !skip[i] {
			out = append(out, n)
		}
	}
	return out
}

// mcpStatus is upstream's status.mcp: Disabled, or the MCP server's
// Reconciled and Ready conditions, phase and URL.
func mcpStatus(prev *evalhubv1.EvalHubMCPStatus, o observed) *evalhubv1.EvalHubMCPStatus {
	if !mcpEnabled(o.Spec) {
		return &evalhubv1.EvalHubMCPStatus{Phase: evalhubv1.PhaseDisabled}
	}
	m := &evalhubv1.EvalHubMCPStatus{Phase: evalhubv1.PhasePending}
	if prev != nil {
		m.Conditions = append(m.Conditions, prev.Conditions...)
	}
	set := func(c metav1.Condition) { status.Set(&m.Conditions, c, o.Generation, o.Now) }
	if o.Failure != nil {
		set(cond(status.TypeReconciled, false, o.Failure.Reason, o.Failure.Error()))
		m.Phase = evalhubv1.PhaseError
	} else {
		set(cond(status.TypeReconciled, true, "ReconcileComplete", "the MCP server's objects are applied"))
	}
	d := o.MCPDeployment
	switch {
	case !o.MCPRendered || d == nil:
		set(cond(status.TypeReady, false, "DeploymentNotFound", "MCP deployment not found"))
	case serverReady(d):
		set(cond(status.TypeReady, true, "DeploymentReady", "All MCP replicas are ready"))
		if m.Phase != evalhubv1.PhaseError {
			m.Phase, m.Ready, m.URL = evalhubv1.PhaseReady, true, mcpURL(o.Name, o.Namespace)
		}
	default:
		set(cond(status.TypeReady, false, "DeploymentNotReady", fmt.Sprintf("Waiting for MCP deployment (%d/%d replicas ready)", d.Status.ReadyReplicas, d.Status.Replicas)))
	}
	meta.RemoveStatusCondition(&m.Conditions, "RouteReady")
	return m
}
