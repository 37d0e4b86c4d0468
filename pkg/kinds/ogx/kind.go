package ogx

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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/stackserver"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
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
	return release.ValuesOf(translate(cr, in.values))
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

// SharedConfigMaps implements release.ConfigMapReader: the operator's
// settings and upstream's operator ConfigMap, read by every CR.
func (k *Kind) SharedConfigMaps() []string { return k.SharedConfigMapsWith(UpstreamConfigMap) }

// ConfigMapRefs implements release.ConfigMapReader: the ConfigMaps a CR
// reads, as "namespace/name"; a change to any of them reconciles the CR.
func (*Kind) ConfigMapRefs(cr *ogxv1beta1.OGXServer) []string {
	refs := []string{cr.Namespace + "/" + trust.ODHBundle}
	add := func(ref *ogxv1beta1.ConfigMapKeyRef) {
		if ref != nil && ref.Name != "" {
			refs = append(refs, cr.Namespace+"/"+ref.Name)
		}
	}
	add(cr.Spec.OverrideConfig)
	add(cr.Spec.BaseConfig)
	if tc := cr.Spec.TLS; tc != nil {
		if tc.Trust != nil {
			for i := range tc.Trust.CACertificates {
				add(&tc.Trust.CACertificates[i])
			}
		}
		if tc.Identity != nil {
			add(&tc.Identity.Cert)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}
