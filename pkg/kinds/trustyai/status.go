package trustyai

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
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
	status.Observed
	// Replicas are the pods that run (podReplicas); ReplicasIgnored says
	// why spec.replicas is not what runs ("" when it is).
	Replicas        int32
	ReplicasIgnored string
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

// computeStatus computes the new status from the previous one and the
// observation: pure and stable (an unchanged observation gives an identical
// status, lastTransitionTime included).
func computeStatus(prev trustyv1.TrustyAIServiceStatus, o observed) trustyv1.TrustyAIServiceStatus {
	st := *prev.DeepCopy()
	st.ObservedGeneration = o.Generation
	s := o.On(&st.Conditions)
	s.Set(o.AppliedAs(TypeProvisioningSucceeded))
	s.Set(degradedCondition(o))
	// Ready names every gate not True.
	gates := []metav1.Condition{s.Set(status.DeploymentCondition(o.Deployment, o.Replicas))}
	setReplicasHonored(s, o)
	if c, ok := setPVC(s, o); ok {
		gates = append(gates, c)
	}
	if c, ok := setRoute(s, o); ok {
		gates = append(gates, c)
	}
	db := setDatabase(s, o)
	s.Set(tlsCondition(o.TLSMode))
	setWiring(s, o.Wiring)
	s.Set(status.TrustCondition(o.Trust))
	ready := s.Set(readyCondition(o, db, gates))
	s.Set(availableCondition(ready))
	setPhase(&st, o.Deployment, ready)
	return st
}

// degradedCondition is Degraded: True while the current spec is not
// applied.
func degradedCondition(o observed) metav1.Condition {
	if o.Failure != nil {
		return status.True(TypeDegraded, o.Failure.Reason, o.Failure.Error())
	}
	return status.False(TypeDegraded, "AsExpected", "the current spec is applied")
}

// setReplicasHonored sets ReplicasHonored False while spec.replicas is not
// what runs, and removes it otherwise.
func setReplicasHonored(s status.Conditions, o observed) {
	if o.ReplicasIgnored == "" {
		s.Remove(TypeReplicasHonored)
		return
	}
	s.Set(status.False(TypeReplicasHonored, ReasonReplicasIgnored, o.ReplicasIgnored))
}

// pvcReasons are upstream's reasons of PVCAvailable for StorageReady's.
var pvcReasons = map[string]string{"ClaimBound": "PVCFound", "ClaimNotFound": "PVCNotFound"}

// setPVC sets PVCAvailable, StorageReady with upstream's type and reasons,
// where the pods mount the claim, and removes it otherwise; ok says Ready
// waits for it.
func setPVC(s status.Conditions, o observed) (gate metav1.Condition, ok bool) {
	if !o.UsesClaim {
		s.Remove(TypePVCAvailable)
		return gate, false
	}
	c := status.StorageCondition(o.Requested, o.Claim)
	c.Type = TypePVCAvailable
	if r, found := pvcReasons[c.Reason]; found {
		c.Reason = r
	}
	return s.Set(c), true
}

// setRoute sets RouteAvailable (routeCondition), or removes it where
// nothing exposes the service; ok says Ready waits for it.
func setRoute(s status.Conditions, o observed) (gate metav1.Condition, ok bool) {
	c, ok := routeCondition(o)
	if !ok {
		// Nothing exposes the service, and nothing is meant to.
		s.Remove(TypeRouteAvailable)
		return gate, false
	}
	return s.Set(c), true
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
		return status.False(TypeRouteAvailable, "RouteNotFound", "the Route does not exist yet"), true
	case o.RouteRendered && !status.RouteAdmitted(o.Route):
		return status.False(TypeRouteAvailable, "RouteNotAdmitted", "no router has admitted the Route yet"), true
	case o.RouteRendered:
		return status.True(TypeRouteAvailable, "RouteFound", "the Route is admitted"), true
	case o.Ingress && o.IngressHost != "":
		return status.True(TypeRouteAvailable, "IngressCreated", "no Route API on this cluster: an Ingress exposes the service at https://"+o.IngressHost), true
	case o.Ingress:
		return status.True(TypeRouteAvailable, "IngressCreated", "no Route API on this cluster: an Ingress exposes the service"), true
	case o.Applied:
		return c, false
	}
	return status.False(TypeRouteAvailable, "RouteNotFound", "neither the Route nor the Ingress exists yet"), true
}

// setDatabase sets DBAvailable in DATABASE mode, and removes it otherwise.
// It returns the condition set: zero outside DATABASE mode.
func setDatabase(s status.Conditions, o observed) (db metav1.Condition) {
	switch {
	case !o.Database:
		s.Remove(TypeDBAvailable)
		return db
	case o.DB.Reason != "":
		return s.Set(status.False(TypeDBAvailable, o.DB.Reason, o.DB.Message))
	}
	msg := "the service's pods start with the database credentials"
	if o.DBCAUnknown {
		msg += "; the operator may not read Secrets in this namespace, so a database CA (Secret " + o.DBCAName + ") is not used: an administrator grants that read with a RoleBinding of ClusterRole ai-stack-operator-trustyai-db-ca-reader (docs/security.md)"
	}
	return s.Set(status.True(TypeDBAvailable, "DBAvailable", msg))
}

// tlsConditions are TLSAvailable for the TLS modes where somebody creates
// the serving certificates.
var tlsConditions = map[string]metav1.Condition{
	platform.TLSOpenShift:   status.True(TypeTLSAvailable, "ServiceCA", "OpenShift's service CA issues the serving certificates <name>-tls and <name>-internal"),
	platform.TLSCertManager: status.True(TypeTLSAvailable, "CertManager", "cert-manager issues the serving certificates <name>-tls and <name>-internal"),
}

// tlsCondition says who creates the serving certificates, or that nobody
// does: then kube-rbac-proxy serves a self-signed certificate of its own and
// the internal endpoint has no TLS.
func tlsCondition(mode string) metav1.Condition {
	if c, ok := tlsConditions[mode]; ok {
		return c
	}
	return status.False(TypeTLSAvailable, "NoCertificateIssuer", "neither OpenShift's service CA nor cert-manager is on this cluster: kube-rbac-proxy serves a self-signed certificate and the model servers reach the service over http; install cert-manager for verified TLS")
}

// setWiring sets InferenceServicesPresent from what the wiring did; while
// it did not run, the condition stays as it was.
func setWiring(s status.Conditions, w *wiring) {
	switch {
	case w == nil:
	case w.ok:
		s.Set(status.True(TypeInferenceServicesPresent, w.reason, w.message))
	default:
		s.Set(status.False(TypeInferenceServicesPresent, w.reason, w.message))
	}
}

// Ready's reason and message when every gate is True.
const (
	reasonAllComponentsReady  = "AllComponentsReady"
	messageAllComponentsReady = "the service runs the current spec"
)

// readyCondition is Ready: the failure first, then the database the pods
// cannot use (DBNotReady), then every other gate not True
// (ComponentsNotReady).
func readyCondition(o observed, db metav1.Condition, gates []metav1.Condition) metav1.Condition {
	if db.Status == metav1.ConditionFalse {
		return o.Ready(reasonAllComponentsReady, messageAllComponentsReady, status.False(TypeDBAvailable, "DBNotReady", db.Message))
	}
	return o.ReadyAll(reasonAllComponentsReady, messageAllComponentsReady, gates...)
}

// availableCondition is upstream's Available: Ready in its words.
func availableCondition(ready metav1.Condition) metav1.Condition {
	if ready.Status != metav1.ConditionTrue {
		return status.False(TypeAvailable, "NotAllComponentsReady", "not all components are ready")
	}
	return status.True(TypeAvailable, "AllComponentsReady", "all components are ready")
}

// setPhase sets upstream's replicas, phase and ready from the Deployment
// (nil when absent) and Ready.
func setPhase(st *trustyv1.TrustyAIServiceStatus, d *appsv1.Deployment, ready metav1.Condition) {
	st.Replicas = 0
	if d != nil {
		st.Replicas = d.Status.AvailableReplicas
	}
	st.Phase, st.Ready = trustyv1.PhaseNotReady, corev1.ConditionFalse
	if ready.Status == metav1.ConditionTrue {
		st.Phase, st.Ready = trustyv1.PhaseReady, corev1.ConditionTrue
	}
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
		Observed: status.Observed{Generation: cr.Generation, Failure: obs.Failure, Applied: obs.Applied, Now: obs.Now},
		Replicas: podReplicas(cr), ReplicasIgnored: replicasIgnored(cr),
		UsesClaim: usesClaim(cr), Database: cr.Spec.Storage.Format == trustyv1.StorageDatabase,
		RouteRendered: obs.Find("Route") != "", Ingress: obs.Find("Ingress") != "",
	}
	o.Wiring, _ = obs.Finished.(*wiring)
	if in != nil {
		o.Trust = in.trust
		o.DBCAUnknown, o.DBCAName = in.dbCAUnknown, dbCAName(cr.Name)
		o.TLSMode = in.values.Platform.TLSMode()
		if d := in.values.Settings.IngressDomain; d != "" {
			o.IngressHost = ingressHost(cr.Name, cr.Namespace, d)
		}
	} else if caps, err := k.Capabilities(); err == nil {
		o.TLSMode = platform.ClusterOf(caps).TLSMode()
	}
	if o.UsesClaim {
		if q, err := resource.ParseQuantity(cr.Spec.Storage.Size); err == nil {
			o.Requested = &q
		}
	}
	var err error
	if o.Deployment, err = release.Rendered(ctx, k.Deps, cr.Namespace, obs, "Deployment", &appsv1.Deployment{}); err != nil {
		return err
	}
	if name := obs.Find("PersistentVolumeClaim"); name != "" && o.UsesClaim {
		if o.Claim, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &corev1.PersistentVolumeClaim{}); err != nil {
			return err
		}
	}
	if name := obs.Find("Route"); name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(platform.Route)
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
