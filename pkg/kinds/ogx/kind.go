package ogx

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/configgen"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Kind is OGXServer for the release reconciler.
type Kind struct {
	release.Deps
	// OperatorVersion is reported in status.version.operatorVersion.
	OperatorVersion string

	probeOnce sync.Once
	probes    *stackserver.Prober

	// waiting are the CRs whose adoption waits for the old server to go:
	// they are looked at again every adoptionRecheck (the old kind is not
	// watched by this kind).
	mu      sync.Mutex
	waiting map[types.UID]bool
}

// adoptionRecheck is how often a CR waiting for the old server looks again.
const adoptionRecheck = 10 * time.Second

func (k *Kind) setWaiting(uid types.UID, waiting bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !waiting {
		delete(k.waiting, uid)
		return
	}
	if k.waiting == nil {
		k.waiting = map[types.UID]bool{}
	}
	k.waiting[uid] = true
}

// servers asks the servers what they say of themselves.
func (k *Kind) servers() *stackserver.Prober {
	k.probeOnce.Do(func() { k.probes = stackserver.NewProber(k.HTTPClient) })
	return k.probes
}

var (
	_ release.Kind[*ogxv1beta1.OGXServer, *Inputs]     = (*Kind)(nil)
	_ release.Preparer[*ogxv1beta1.OGXServer, *Inputs] = (*Kind)(nil)
	_ release.ConfigMapReader[*ogxv1beta1.OGXServer]   = (*Kind)(nil)
	_ release.Offline[*ogxv1beta1.OGXServer, *Inputs]  = (*Kind)(nil)
	_ release.Rechecker[*ogxv1beta1.OGXServer]         = (*Kind)(nil)
)

// Meta implements release.Kind.
func (*Kind) Meta() release.Meta { return Meta() }

// Meta describes OGXServer to the reconciler. Routes, ServiceMonitors and
// PrometheusRules are optional APIs, not watched: drift on them is repaired
// on the next reconcile. ConfigMaps are watched as metadata (ConfigMapRefs).
func Meta() release.Meta {
	return release.Meta{
		GVK:           ogxv1beta1.GroupVersion.WithKind(ogxv1beta1.Kind),
		NewObject:     func() client.Object { return &ogxv1beta1.OGXServer{} },
		NewList:       func() client.ObjectList { return &ogxv1beta1.OGXServerList{} },
		Chart:         Chart,
		ReleasePrefix: ReleasePrefix,
		RelatedImages: ogxImages(),
		OwnedTypes: []client.Object{
			&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &corev1.PersistentVolumeClaim{},
			&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
			&policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{},
		},
		OptionalAPIs:      []schema.GroupVersionKind{platform.Route, platform.ServiceMonitor, platform.PrometheusRule, platform.SCC},
		WarningConditions: []string{status.TypeTrustReady},
		// The upstream operator's kustomize labels; its cache selects on managed-by
		// (ogx-k8s-operator 1784464 main.go).
		UpstreamLabels: map[string]string{"app.kubernetes.io/managed-by": "ogx-operator", "app.kubernetes.io/part-of": "ogx", "ogx.io/watch": "true"},
	}
}

// Values implements release.Kind.
func (k *Kind) Values(cr *ogxv1beta1.OGXServer, in *Inputs) (map[string]any, error) {
	v, err := translate(cr, in.values)
	if err != nil {
		return nil, err
	}
	return release.Values(v)
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *ogxv1beta1.OGXServer) []metav1.Condition {
	return cr.Status.Conditions
}

// Recheck implements release.Rechecker: a CR whose server is being asked is
// reconciled again soon, to take the answer.
func (k *Kind) Recheck(cr *ogxv1beta1.OGXServer) time.Duration {
	if k.servers().Owed(cr.UID) {
		return stackserver.Recheck
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.waiting[cr.UID] {
		return adoptionRecheck
	}
	return 0
}

// Status implements release.Kind: it reads the rendered objects back and
// computes the status from them.
func (k *Kind) Status(ctx context.Context, cr *ogxv1beta1.OGXServer, in *Inputs, obs release.Observation) error {
	o := observe(cr, in, obs, k.OperatorVersion)
	var err error
	if name := obs.Find("Deployment"); name != "" {
		if o.Deployment, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &appsv1.Deployment{}); err != nil {
			return err
		}
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
		url := ""
		switch {
		case obs.Find("Route") != "":
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(platform.Route)
			route, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, obs.Find("Route"), u)
			if err != nil {
				return err
			}
			url = status.RouteURL(route)
		case obs.Find("Ingress") != "":
			ing, err := release.GetRendered(ctx, k.Deps, cr.Namespace, obs.Find("Ingress"), &networkingv1.Ingress{})
			if err != nil {
				return err
			}
			url = status.IngressURL(ing)
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
