package llamastack

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Kind is LlamaStackDistribution for the release reconciler.
type Kind struct {
	release.Deps
	// OperatorVersion is reported in status.version.operatorVersion.
	OperatorVersion string

	probeOnce sync.Once
	probes    *stackserver.Prober
}

// servers asks the servers what they say of themselves (server.go).
func (k *Kind) servers() *stackserver.Prober {
	k.probeOnce.Do(func() { k.probes = stackserver.NewProber(k.HTTPClient) })
	return k.probes
}

var (
	_ release.Kind[*llamav1alpha1.LlamaStackDistribution, *Inputs]     = (*Kind)(nil)
	_ release.Preparer[*llamav1alpha1.LlamaStackDistribution, *Inputs] = (*Kind)(nil)
	_ release.ConfigMapReader[*llamav1alpha1.LlamaStackDistribution]   = (*Kind)(nil)
	_ release.Offline[*llamav1alpha1.LlamaStackDistribution, *Inputs]  = (*Kind)(nil)
	_ release.Rechecker[*llamav1alpha1.LlamaStackDistribution]         = (*Kind)(nil)
)

// Meta implements release.Kind.
func (*Kind) Meta() release.Meta { return Meta() }

// Meta describes LlamaStackDistribution to the reconciler. Routes and
// ServiceMonitors are optional APIs and not watched; drift on them is
// repaired on the next reconcile. ConfigMaps are watched as metadata only
// (ConfigMapRefs).
func Meta() release.Meta {
	return release.Meta{
		GVK:           llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind),
		NewObject:     func() client.Object { return &llamav1alpha1.LlamaStackDistribution{} },
		NewList:       func() client.ObjectList { return &llamav1alpha1.LlamaStackDistributionList{} },
		Chart:         Chart,
		ReleasePrefix: ReleasePrefix,
		RelatedImages: map[string]string(distributions.Default()),
		OwnedTypes: []client.Object{
			&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &corev1.PersistentVolumeClaim{},
			&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
			&policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{},
		},
		OptionalAPIs:      []schema.GroupVersionKind{platform.Route, platform.ServiceMonitor, platform.SCC},
		WarningConditions: []string{status.TypeTrustReady, TypeAllowedFromValid},
		// The upstream operator's kustomize labels; its cache selects on managed-by
		// (llama-stack-k8s-operator 7735e43 main.go).
		UpstreamLabels: map[string]string{"app.kubernetes.io/managed-by": "llama-stack-operator", "app.kubernetes.io/part-of": "llama-stack", "llamastack.io/watch": "true"},
	}
}

// Values implements release.Kind.
func (k *Kind) Values(cr *llamav1alpha1.LlamaStackDistribution, in *Inputs) (map[string]any, error) {
	v, err := translate(cr, in.values)
	if err != nil {
		return nil, err
	}
	return release.Values(v)
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *llamav1alpha1.LlamaStackDistribution) []metav1.Condition {
	return cr.Status.Conditions
}

// Status implements release.Kind: it reads the rendered objects back (the
// Deployment, Service and PVC through the cache, a Route from the API
// server) and computes the status from them.
func (k *Kind) Status(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, in *Inputs, obs release.Observation) error {
	o := observe(cr, in, obs, k.OperatorVersion)
	var err error
	if name := obs.Find("Deployment"); name != "" {
		if o.Deployment, err = release.GetRendered(ctx, k.Deps, cr.Namespace, name, &appsv1.Deployment{}); err != nil {
			return err
		}
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
	switch {
	case obs.Find("Route") != "":
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(platform.Route)
		route, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, obs.Find("Route"), u)
		if err != nil {
			return err
		}
		o.RouteURL = status.RouteURL(route)
	case obs.Find("Ingress") != "":
		ing, err := release.GetRendered(ctx, k.Deps, cr.Namespace, obs.Find("Ingress"), &networkingv1.Ingress{})
		if err != nil {
			return err
		}
		o.RouteURL = status.IngressURL(ing)
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
