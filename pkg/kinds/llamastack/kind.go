package llamastack

import (
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
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
	return release.ValuesOf(translate(cr, in.values))
}

// Conditions implements release.Kind.
func (*Kind) Conditions(cr *llamav1alpha1.LlamaStackDistribution) []metav1.Condition {
	return cr.Status.Conditions
}

// SharedConfigMaps implements release.ConfigMapReader: the operator's
// settings and upstream's operator ConfigMap, read by every CR.
func (k *Kind) SharedConfigMaps() []string { return k.SharedConfigMapsWith(UpstreamConfigMap) }

// ConfigMapRefs implements release.ConfigMapReader: the ConfigMaps a CR
// reads, as "namespace/name"; a change to any of them reconciles the CR.
func (*Kind) ConfigMapRefs(cr *llamav1alpha1.LlamaStackDistribution) []string {
	refs := []string{cr.Namespace + "/" + trust.ODHBundle}
	if uc := cr.Spec.Server.UserConfig; uc != nil {
		ns := uc.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+uc.ConfigMapName)
	}
	if tc := cr.Spec.Server.TLSConfig; tc != nil && tc.CABundle != nil {
		ns := tc.CABundle.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+tc.CABundle.ConfigMapName)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// Recheck implements release.Rechecker: a CR whose server is being asked is
// reconciled again soon, to take the answer.
func (k *Kind) Recheck(cr *llamav1alpha1.LlamaStackDistribution) time.Duration {
	if k.servers().Owed(cr.UID) {
		return stackserver.Recheck
	}
	return 0
}
