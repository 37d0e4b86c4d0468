package trustyai

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// Condition types: upstream's, and the operator's own (TLSAvailable,
// TrustReady, DeploymentReady, ReplicasHonored).
const (
	TypeProvisioningSucceeded = "ProvisioningSucceeded"
	TypeDegraded              = "Degraded"
	TypeAvailable             = "Available"
	TypePVCAvailable          = "PVCAvailable"
	TypeRouteAvailable        = "RouteAvailable"
	TypeDBAvailable           = "DBAvailable"
	TypeTLSAvailable          = "TLSAvailable"
	// TypeReplicasHonored is False, reason ReasonReplicasIgnored, while
	// spec.replicas asks for other than the 1 pod that PVC mode and a
	// migration run; absent otherwise.
	TypeReplicasHonored = "ReplicasHonored"
)

// ReasonReplicasIgnored is ReplicasHonored's reason.
const ReasonReplicasIgnored = "ReplicasIgnored"

// observed is what one reconcile saw, for computeStatus.
type observed struct {
	Generation int64
	// Replicas are the pods that run (podReplicas); ReplicasIgnored says
	// why spec.replicas is not what runs ("" when it is).
	Replicas        int32
	ReplicasIgnored string
	Failure         *status.Failure
	Applied         bool
	Now             metav1.Time
	// Claim is wanted when UsesClaim; nil when absent.
	UsesClaim bool
	Requested *resource.Quantity
	Claim     *corev1.PersistentVolumeClaim
	// Database is true in DATABASE mode; DB is what the pods say of it.
	Database bool
	DB       dbState
	// DBCAUnknown: whether Secret DBCAName exists could not be read.
	DBCAUnknown bool
	DBCAName    string
	// Deployment as read back, nil when absent.
	Deployment *appsv1.Deployment
	// Route is nil when none is rendered; RouteAdmitted says whether a
	// router admitted it. Ingress says an Ingress is rendered instead, for
	// IngressHost ("" when unknown).
	Route         *unstructured.Unstructured
	RouteRendered bool
	Ingress       bool
	IngressHost   string
	TLSMode       string
	Trust         trust.Outcome
	// Wiring is what the model-server wiring did; nil when it did not run
	// (the condition stays as it was).
	Wiring *wiring
}

// dbState is what the pods' containers say of the database Secret.
type dbState struct {
	// Reason is "" when nothing is wrong (as far as the pods tell), or
	// DBCredentialsNotFound, DBCredentialsError or DBConnectionError.
	Reason, Message string
}

// cond is status.Cond.
var cond = status.Cond

// computeStatus computes the new status from the previous one and the
// observation: pure and stable (an unchanged observation gives an identical
// status, lastTransitionTime included).
func computeStatus(prev trustyv1.TrustyAIServiceStatus, o observed) trustyv1.TrustyAIServiceStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = o.Generation
	set := func(c metav1.Condition) metav1.Condition {
		status.Set(&st.Conditions, c, o.Generation, o.Now)
		return c
	}

	provisioned := cond(TypeProvisioningSucceeded, true, "ReleaseApplied", "the chart is applied for the current spec")
	if o.Failure != nil {
		provisioned = cond(TypeProvisioningSucceeded, false, o.Failure.Reason, o.Failure.Error())
	}
	set(provisioned)
	degraded := cond(TypeDegraded, false, "AsExpected", "the current spec is applied")
	if o.Failure != nil {
		degraded = cond(TypeDegraded, true, o.Failure.Reason, o.Failure.Error())
	}
	set(degraded)

	deployment := set(status.DeploymentCondition(o.Deployment, o.Replicas))
	if o.ReplicasIgnored != "" {
		set(cond(TypeReplicasHonored, false, ReasonReplicasIgnored, o.ReplicasIgnored))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypeReplicasHonored)
	}
	notReady := []metav1.Condition{}
	if deployment.Status != metav1.ConditionTrue {
		notReady = append(notReady, deployment)
	}
	if o.UsesClaim {
		c := status.StorageCondition(o.Requested, o.Claim)
		c.Type = TypePVCAvailable
		switch c.Reason {
		case "ClaimBound":
			c.Reason = "PVCFound"
		case "ClaimNotFound":
			c.Reason = "PVCNotFound"
		}
		if set(c).Status != metav1.ConditionTrue {
			notReady = append(notReady, c)
		}
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypePVCAvailable)
	}
	if route, ok := routeCondition(o); !ok {
		// Nothing exposes the service, and nothing is meant to.
		meta.RemoveStatusCondition(&st.Conditions, TypeRouteAvailable)
	} else if set(route).Status != metav1.ConditionTrue {
		notReady = append(notReady, route)
	}
	dbReady := true
	if o.Database {
		db := cond(TypeDBAvailable, true, "DBAvailable", "the service's pods start with the database credentials")
		if o.DBCAUnknown {
			db.Message += "; the operator may not read Secrets in this namespace, so a database CA (Secret " + o.DBCAName + ") is not used: an administrator grants that read with a RoleBinding of ClusterRole ai-stack-operator-trustyai-db-ca-reader (docs/security.md)"
		}
		if o.DB.Reason != "" {
			db = cond(TypeDBAvailable, false, o.DB.Reason, o.DB.Message)
			dbReady = false
		}
		set(db)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, TypeDBAvailable)
	}
	set(tlsCondition(o.TLSMode))
	if w := o.Wiring; w != nil {
		set(cond(TypeInferenceServicesPresent, w.ok, w.reason, w.message))
	}
	set(status.TrustCondition(o.Trust))

	ready := cond(status.TypeReady, true, "AllComponentsReady", "the service runs the current spec")
	switch {
	case o.Failure != nil:
		ready = cond(status.TypeReady, false, o.Failure.Reason, "the current spec is not applied: "+o.Failure.Error())
	case !dbReady:
		ready = cond(status.TypeReady, false, "DBNotReady", o.DB.Message)
	case len(notReady) > 0:
		var parts []string
		for _, c := range notReady {
			parts = append(parts, c.Type+": "+c.Message)
		}
		ready = cond(status.TypeReady, false, "ComponentsNotReady", strings.Join(parts, "; "))
	}
	set(ready)
	available := cond(TypeAvailable, true, "AllComponentsReady", "all components are ready")
	if ready.Status != metav1.ConditionTrue {
		available = cond(TypeAvailable, false, "NotAllComponentsReady", "not all components are ready")
	}
	set(available)

	st.Replicas = 0
	if o.Deployment != nil {
		st.Replicas = o.Deployment.Status.AvailableReplicas
	}
	st.Phase, st.Ready = trustyv1.PhaseNotReady, corev1.ConditionFalse
	if ready.Status == metav1.ConditionTrue {
		st.Phase, st.Ready = trustyv1.PhaseReady, corev1.ConditionTrue
	}
	return st
}

// routeCondition is RouteAvailable: the Route exists and a router admitted
// it; off OpenShift, the Ingress in its place exists. ok is false where the
// release that runs exposes nothing (no Route API, and no
// trustyai-ingress-domain in the operator's settings): the condition goes,
// as PVCAvailable does without a claim, Ready does not wait for it, and
// nothing is rechecked.
func routeCondition(o observed) (c metav1.Condition, ok bool) {
	switch {
	case o.RouteRendered && o.Route == nil:
		return cond(TypeRouteAvailable, false, "RouteNotFound", "the Route does not exist yet"), true
	case o.RouteRendered && !status.RouteAdmitted(o.Route):
		return cond(TypeRouteAvailable, false, "RouteNotAdmitted", "no router has admitted the Route yet"), true
	case o.RouteRendered:
		return cond(TypeRouteAvailable, true, "RouteFound", "the Route is admitted"), true
	case o.Ingress && o.IngressHost != "":
		return cond(TypeRouteAvailable, true, "IngressCreated", "no Route API on this cluster: an Ingress exposes the service at https://"+o.IngressHost), true
	case o.Ingress:
		return cond(TypeRouteAvailable, true, "IngressCreated", "no Route API on this cluster: an Ingress exposes the service"), true
	case o.Applied:
		return metav1.Condition{}, false
	}
	return cond(TypeRouteAvailable, false, "RouteNotFound", "neither the Route nor the Ingress exists yet"), true
}

// tlsCondition says who creates the serving certificates, or that nobody
// does: then kube-rbac-proxy serves a self-signed certificate of its own and
// the internal endpoint has no TLS.
func tlsCondition(mode string) metav1.Condition {
	switch mode {
	case tlsOpenShift:
		return cond(TypeTLSAvailable, true, "ServiceCA", "OpenShift's service CA issues the serving certificates <name>-tls and <name>-internal")
	case tlsCertManager:
		return cond(TypeTLSAvailable, true, "CertManager", "cert-manager issues the serving certificates <name>-tls and <name>-internal")
	}
	return cond(TypeTLSAvailable, false, "NoCertificateIssuer", "neither OpenShift's service CA nor cert-manager is on this cluster: kube-rbac-proxy serves a self-signed certificate and the model servers reach the service over http; install cert-manager for verified TLS")
}

// dbProblem reads what the pods' containers say of the database Secret:
// the kubelet reports a missing Secret or key as CreateContainerConfigError
// (the operator itself never reads the Secret).
func dbProblem(pods []corev1.Pod, secret string) dbState {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			w := cs.State.Waiting
			if w == nil || w.Reason != "CreateContainerConfigError" {
				continue
			}
			switch {
			case strings.Contains(w.Message, fmt.Sprintf("secret %q not found", secret)):
				return dbState{Reason: "DBCredentialsNotFound", Message: fmt.Sprintf("Secret %s (spec.storage.databaseConfigurations) does not exist: create it with the keys databaseKind, databaseUsername, databasePassword, databaseService, databasePort and databaseName", secret)}
			case strings.Contains(w.Message, "couldn't find key"):
				return dbState{Reason: "DBCredentialsError", Message: fmt.Sprintf("Secret %s lacks a key the service needs: %s", secret, w.Message)}
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "trustyai-service" && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" && cs.LastTerminationState.Terminated != nil {
				return dbState{Reason: "DBConnectionError", Message: "the service keeps failing at start (CrashLoopBackOff); check that the database in " + secret + " is reachable and the credentials are right (kubectl logs)"}
			}
		}
	}
	return dbState{}
}

// Status implements release.Kind: it reads the rendered objects back (the
// Deployment and PVC through the cache; the Route and, in DATABASE mode,
// the pods from the API server) and computes the status from them.
func (k *Kind) Status(ctx context.Context, cr *trustyv1.TrustyAIService, in *Inputs, obs release.Observation) error {
	o := observed{
		Generation: cr.Generation, Replicas: podReplicas(cr), ReplicasIgnored: replicasIgnored(cr),
		Failure: obs.Failure, Applied: obs.Applied, Now: obs.Now,
		UsesClaim: usesClaim(cr), Database: cr.Spec.Storage.Format == trustyv1.StorageDatabase,
		RouteRendered: obs.Find("Route") != "", Ingress: obs.Find("Ingress") != "",
	}
	o.Wiring, _ = obs.Finished.(*wiring)
	if in != nil {
		o.Trust = in.trust
		o.DBCAUnknown, o.DBCAName = in.dbCAUnknown, dbCAName(cr.Name)
		o.TLSMode = in.values.Platform.tlsMode()
		if d := in.values.Settings.IngressDomain; d != "" {
			o.IngressHost = ingressHost(cr.Name, cr.Namespace, d)
		}
	} else if caps, err := k.Capabilities(); err == nil {
		o.TLSMode = clusterOf(caps).tlsMode()
	}
	if o.UsesClaim {
		if q, err := resource.ParseQuantity(cr.Spec.Storage.Size); err == nil {
			o.Requested = &q
		}
	}
	var err error
	if name := obs.Find("Deployment"); name != "" {
		if o.Deployment, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &appsv1.Deployment{}); err != nil {
			return err
		}
	}
	if name := obs.Find("PersistentVolumeClaim"); name != "" && o.UsesClaim {
		if o.Claim, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.PersistentVolumeClaim{}); err != nil {
			return err
		}
	}
	if name := obs.Find("Route"); name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(routeGVK)
		if o.Route, err = release.GetOptional(ctx, k.APIReader, cr.Namespace, name, u); err != nil {
			return err
		}
	}
	if o.Database && o.Deployment != nil {
		pods := &corev1.PodList{}
		if err := k.APIReader.List(ctx, pods, client.InNamespace(cr.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": cr.Name, "app.kubernetes.io/part-of": "trustyai"}); err != nil {
			return fmt.Errorf("list the service's pods: %w", err)
		}
		secret := cr.Spec.Storage.DatabaseConfigurations
		if secret == "" {
			secret = dbCredentialsName(cr.Name)
		}
		o.DB = dbProblem(pods.Items, secret)
	}
	cr.Status = computeStatus(cr.Status, o)
	return nil
}
