package evalhub

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
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
	status.Observed
	Spec evalhubv1.EvalHubSpec
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
	s := o.On(&st.Conditions)
	s.Set(o.Reconciled())
	s.Set(status.DeploymentCondition(o.Deployment, replicas(o.Spec)))
	if o.Gathered {
		setDefinitions(s, &st, o)
	}
	if o.Grants != nil {
		setTenants(s, &st, o.Grants)
	}
	setReplicas(&st, o.Deployment)
	ready := s.Set(o.Ready(reasonServerReady, messageServerReady, serverGate(o.Deployment)))
	setPhase(&st, o, ready)
	st.MCP = mcpStatus(prev.MCP, o)
	setLastUpdateTime(&st, prev, o.Now)
	return st
}

// setDefinitions sets TrustReady, ProvidersReady and CollectionsReady, and
// the providers and collections the server offers.
func setDefinitions(s status.Conditions, st *evalhubv1.EvalHubStatus, o observed) {
	s.Set(status.TrustCondition(o.Trust))
	s.Set(definitionsCondition(TypeProvidersReady, "provider", "spec.providers", LabelProviderType, LabelProviderName, o.Spec.Providers, o.MissingProviders))
	s.Set(definitionsCondition(TypeCollectionsReady, "collection", "spec.collections", LabelCollectionType, LabelCollectionName, o.Spec.Collections, o.MissingCollections))
	st.ActiveProviders = found(o.Spec.Providers, o.MissingProviders)
	st.ActiveCollections = found(o.Spec.Collections, o.MissingCollections)
}

// setTenants sets the tenant namespaces and TenantsReady from what Finish
// wrote.
func setTenants(s status.Conditions, st *evalhubv1.EvalHubStatus, g *GrantResult) {
	st.TenantNamespaces = g.Tenants
	if len(g.Problems) > 0 {
		s.Set(status.False(TypeTenantsReady, "GrantsIncomplete", strings.Join(g.Problems, "; ")))
		return
	}
	s.Set(status.True(TypeTenantsReady, "GrantsWritten", fmt.Sprintf("the permissions of the server and its jobs are written in its namespace and %d tenant namespaces", len(g.Tenants))))
}

// setReplicas sets upstream's replicas and readyReplicas from the
// Deployment, nil when absent.
func setReplicas(st *evalhubv1.EvalHubStatus, d *appsv1.Deployment) {
	st.Replicas, st.ReadyReplicas = 0, 0
	if d != nil {
		st.Replicas, st.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
	}
}

// Upstream's reason and message of Ready when the server is ready.
const (
	reasonServerReady  = "DeploymentReady"
	messageServerReady = "All replicas are ready"
)

// serverGate is Ready's gate: upstream's readiness of the server's
// Deployment (nil when absent), in upstream's words.
func serverGate(d *appsv1.Deployment) metav1.Condition {
	switch {
	case d == nil:
		return status.False(status.TypeReady, "DeploymentNotFound", "Deployment not found")
	case !serverReady(d):
		return status.False(status.TypeReady, "DeploymentNotReady", fmt.Sprintf("Waiting for deployment to be ready (%d/%d replicas ready)", d.Status.ReadyReplicas, d.Status.Replicas))
	}
	return status.True(status.TypeReady, reasonServerReady, messageServerReady)
}

// setPhase sets upstream's ready, phase and, once ready, URL.
func setPhase(st *evalhubv1.EvalHubStatus, o observed, ready metav1.Condition) {
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
}

// setLastUpdateTime moves lastUpdateTime to now only when something else
// moved (or it is unset).
func setLastUpdateTime(st *evalhubv1.EvalHubStatus, prev evalhubv1.EvalHubStatus, now metav1.Time) {
	before, after := prev.DeepCopy(), st.DeepCopy()
	before.LastUpdateTime, after.LastUpdateTime = nil, nil
	if !equality.Semantic.DeepEqual(before, after) || st.LastUpdateTime == nil {
		st.LastUpdateTime = &now
	}
}

// definitionsCondition says which listed names have no definition, and how
// to add one.
func definitionsCondition(t, what, field, typeLabel, nameLabel string, names []string, missing []int) metav1.Condition {
	if len(missing) == 0 {
		return status.True(t, "AllFound", fmt.Sprintf("every %s listed in %s has a definition", what, field))
	}
	var parts []string
	for _, i := range missing {
		parts = append(parts, fmt.Sprintf("%s[%d] %s", field, i, status.Quote(names[i])))
	}
	return status.False(t, strings.ToUpper(what[:1])+what[1:]+"NotFound", fmt.Sprintf("%s: no ConfigMap labelled %s=system and %s=<name> in the operator's namespace; the server runs without it. Install the definition there (upstream's config/configmaps/evalhub) or remove the entry", strings.Join(parts, ", "), typeLabel, nameLabel))
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
	s := o.On(&m.Conditions)
	setMCPReconciled(s, m, o.Failure)
	if s.Set(mcpReadyCondition(o)).Status == metav1.ConditionTrue && m.Phase != evalhubv1.PhaseError {
		m.Phase, m.Ready, m.URL = evalhubv1.PhaseReady, true, mcpURL(o.Name, o.Namespace)
	}
	s.Remove("RouteReady")
	return m
}

// setMCPReconciled sets the MCP server's Reconciled, in upstream's words,
// and its phase Error on a failure.
func setMCPReconciled(s status.Conditions, m *evalhubv1.EvalHubMCPStatus, failure *status.Failure) {
	if failure != nil {
		s.Set(status.False(status.TypeReconciled, failure.Reason, failure.Error()))
		m.Phase = evalhubv1.PhaseError
		return
	}
	s.Set(status.True(status.TypeReconciled, "ReconcileComplete", "the MCP server's objects are applied"))
}

// mcpReadyCondition is the MCP server's Ready: upstream's readiness of its
// Deployment, in upstream's words.
func mcpReadyCondition(o observed) metav1.Condition {
	d := o.MCPDeployment
	switch {
	case !o.MCPRendered || d == nil:
		return status.False(status.TypeReady, "DeploymentNotFound", "MCP deployment not found")
	case serverReady(d):
		return status.True(status.TypeReady, "DeploymentReady", "All MCP replicas are ready")
	}
	return status.False(status.TypeReady, "DeploymentNotReady", fmt.Sprintf("Waiting for MCP deployment (%d/%d replicas ready)", d.Status.ReadyReplicas, d.Status.Replicas))
}

// Status implements release.Kind: the Deployments through the cache.
func (k *Kind) Status(ctx context.Context, cr *evalhubv1.EvalHub, in *Inputs, obs release.Observation) error {
	o := observed{
		Observed: status.Observed{Generation: cr.Generation, Failure: obs.Failure, Now: obs.Now},
		Spec:     cr.Spec, Namespace: cr.Namespace, Name: cr.Name,
	}
	if res, ok := obs.Finished.(*GrantResult); ok && res != nil {
		o.Grants = res
	}
	if in != nil {
		o.Trust = in.trust
		o.MissingProviders, o.MissingCollections = in.missingProviders, in.missingCollections
		o.Gathered = true
	}
	for _, ref := range obs.Objects {
		if ref.Kind != "Deployment" {
			continue
		}
		d, err := release.GetRendered(ctx, k.Deps, cr.Namespace, ref.Name, &appsv1.Deployment{})
		if err != nil {
			return err
		}
		if ref.Name == cr.Name {
			o.Deployment = d
		} else {
			o.MCPDeployment, o.MCPRendered = d, true
		}
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}
