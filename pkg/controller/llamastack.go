package controller

import (
	"context"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// Optional APIs the LlamaStackDistribution chart renders into.
var (
	routeGVK          = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}
	serviceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	// sccGVK marks OpenShift: SecurityContextConstraints exist on every
	// OpenShift cluster, while a Route API can be installed anywhere.
	sccGVK = schema.GroupVersionKind{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints"}
)

// LlamaStack adapts LlamaStackDistribution to the release reconciler.
type LlamaStack struct {
	// OperatorVersion is reported in status.version.operatorVersion.
	OperatorVersion string
	// OperatorNamespace is allowed through NetworkPolicies and holds the settings ConfigMap.
	OperatorNamespace string
	// SettingsConfigMap names the settings ConfigMap in OperatorNamespace ("" for none).
	SettingsConfigMap string
	// APIReader reads what the caches do not hold (the settings ConfigMap, Routes).
	APIReader client.Reader
	// Capabilities tells which optional APIs the cluster serves.
	Capabilities func() (values.Capabilities, error)
	// Environ is the process environment (RELATED_IMAGE_*); os.Environ when nil.
	Environ func() []string
}

// llamaStackInputs are what Gather reads for one CR.
type llamaStackInputs struct {
	settings settings.Settings
	values   values.LlamaStackInputs
	// trust is nil offline.
	trust *trustState
}

var _ Kind = (*LlamaStack)(nil)

// GroupVersionKind implements Kind.
func (*LlamaStack) GroupVersionKind() schema.GroupVersionKind {
	return llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind)
}

// NewObject implements Kind.
func (*LlamaStack) NewObject() client.Object { return &llamav1alpha1.LlamaStackDistribution{} }

// NewList implements Kind.
func (*LlamaStack) NewList() client.ObjectList { return &llamav1alpha1.LlamaStackDistributionList{} }

// ReleasePrefix implements Kind.
func (*LlamaStack) ReleasePrefix() string { return "llsd" }

// OwnedTypes implements Kind. Routes and ServiceMonitors are optional APIs and
// not watched; drift on them is repaired on the next reconcile. ConfigMaps
// are watched as metadata only (ConfigMapRefs).
func (*LlamaStack) OwnedTypes() []client.Object {
	return []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &corev1.PersistentVolumeClaim{},
		&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
		&policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{},
	}
}

func (k *LlamaStack) environ() []string {
	if k.Environ != nil {
		return k.Environ()
	}
	return os.Environ()
}

// Gather implements Kind: operator settings, capabilities and the claimed storage.
func (k *LlamaStack) Gather(ctx context.Context, reader client.Reader, obj client.Object) (any, error) {
	cr := obj.(*llamav1alpha1.LlamaStackDistribution)
	var data map[string]string
	if k.SettingsConfigMap != "" && k.OperatorNamespace != "" && k.APIReader != nil {
		cm := &corev1.ConfigMap{}
		err := k.APIReader.Get(ctx, client.ObjectKey{Namespace: k.OperatorNamespace, Name: k.SettingsConfigMap}, cm)
		switch {
		case err == nil:
			data = cm.Data
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("read operator settings ConfigMap %s/%s: %w", k.OperatorNamespace, k.SettingsConfigMap, err)
		}
	}
	s, err := settings.Parse(distributions.Default(), k.environ(), data)
	if err != nil {
		return nil, err
	}
	in := &llamaStackInputs{settings: s}
	in.values = values.LlamaStackInputs{
		Distributions:           s.Distributions,
		CommonLabels:            map[string]string{LabelManaged: "true"},
		NetworkPolicyDisabled:   !s.NetworkPolicy,
		OperatorNamespace:       k.OperatorNamespace,
		ProgressDeadlineSeconds: s.ProgressDeadlineSeconds,
	}
	if k.Capabilities != nil {
		if in.values.Capabilities, err = k.Capabilities(); err != nil {
			return nil, err
		}
	}
	if k.APIReader != nil {
		if in.trust, err = k.gatherTrust(ctx, cr, s, in.values.Capabilities); err != nil {
			return nil, err
		}
		if f := in.trust.failure; f != nil && f.Reason == reasonNameConflict {
			// Nothing is applied: the pods would start without the CAs they need.
			return in, &reasonError{reason: f.Reason, message: f.Message}
		}
		in.values.Trust = in.trust.mounted()
		if in.values.UserConfigHash, err = k.userConfigHash(ctx, cr); err != nil {
			return nil, err
		}
	}
	if cr.Spec.Server.Storage != nil {
		pvc := &corev1.PersistentVolumeClaim{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: claimName(cr)}, pvc)
		switch {
		case err == nil:
			if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				in.values.ClaimedStorage = &q
			}
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("read PersistentVolumeClaim: %w", err)
		}
	}
	return in, nil
}

// claimName is the chart's PVC name.
func claimName(cr *llamav1alpha1.LlamaStackDistribution) string {
	return naming.ChildName(cr.Name, "-pvc")
}

// OfflineInputs implements Kind.
func (k *LlamaStack) OfflineInputs(apiVersions []string) (any, error) {
	s, err := settings.Parse(distributions.Default(), k.environ(), nil)
	if err != nil {
		return nil, err
	}
	has := func(gvk schema.GroupVersionKind) bool {
		for _, a := range apiVersions {
			if a == gvk.GroupVersion().String() || a == gvk.GroupVersion().String()+"/"+gvk.Kind {
				return true
			}
		}
		return false
	}
	return &llamaStackInputs{settings: s, values: values.LlamaStackInputs{
		Distributions:     s.Distributions,
		CommonLabels:      map[string]string{LabelManaged: "true"},
		OperatorNamespace: k.OperatorNamespace,
		Capabilities:      values.Capabilities{Route: has(routeGVK), ServiceMonitor: has(serviceMonitorGVK), OpenShift: has(sccGVK)},
	}}, nil
}

// Values implements Kind.
func (k *LlamaStack) Values(obj client.Object, inputs any) (map[string]any, error) {
	in := inputs.(*llamaStackInputs)
	v, err := values.LlamaStack(obj.(*llamav1alpha1.LlamaStackDistribution), in.values)
	if err != nil {
		return nil, err
	}
	return values.Map(v)
}

// Conditions implements Kind.
func (*LlamaStack) Conditions(obj client.Object) []metav1.Condition {
	return obj.(*llamav1alpha1.LlamaStackDistribution).Status.Conditions
}

// SetStatus implements Kind.
func (k *LlamaStack) SetStatus(ctx context.Context, reader client.Reader, obj client.Object, inputs any, obs Observation) error {
	cr := obj.(*llamav1alpha1.LlamaStackDistribution)
	o := status.LlamaStackObserved{
		Generation:      cr.Generation,
		Replicas:        cr.Spec.Replicas,
		Failure:         obs.Failure,
		Applied:         obs.Applied,
		Deleting:        obs.Deleting,
		OperatorVersion: k.OperatorVersion,
		Now:             obs.Now,
	}
	if as := cr.Spec.Server.Autoscaling; as != nil {
		// The HPA owns the count; ready means at least its minimum is available.
		o.Replicas = 1
		if as.MinReplicas != nil {
			o.Replicas = *as.MinReplicas
		}
	}
	if in, ok := inputs.(*llamaStackInputs); ok {
		o.AvailableDistributions = in.settings.Distributions
		if t := in.trust; t != nil {
			o.Trust = status.TrustObservation{Wanted: t.wanted, Sources: t.sources, LastGoodMounted: t.stored != nil}
			if t.bundle != nil {
				o.Trust.Certificates = t.bundle.Certificates
			}
			if t.failure != nil {
				o.Trust.FailureReason, o.Trust.FailureMessage = t.failure.Reason, t.failure.Message
			}
		}
	}
	o.ActiveDistribution = cr.Spec.Server.Distribution.Name
	if o.ActiveDistribution == "" {
		o.ActiveDistribution = cr.Spec.Server.Distribution.Image
	}

	var err error
	if name := obs.Find("Deployment"); name != "" {
		d := &appsv1.Deployment{}
		if o.Deployment, err = getOptional(ctx, reader, cr.Namespace, name, d); err != nil {
			return err
		}
	}
	if name := obs.Find("Service"); name != "" {
		svc, err := getOptional(ctx, reader, cr.Namespace, name, &corev1.Service{})
		if err != nil {
			return err
		}
		o.ServiceFound = svc != nil
		port := cr.Spec.Server.ContainerSpec.Port
		if port == 0 {
			port = llamav1alpha1.DefaultServerPort
		}
		o.ServiceURL = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", name, cr.Namespace, port)
	}
	if st := cr.Spec.Server.Storage; st != nil {
		size := resource.MustParse(llamav1alpha1.DefaultStorageSize)
		if st.Size != nil {
			size = *st.Size
		}
		o.StorageRequested = &size
		if name := obs.Find("PersistentVolumeClaim"); name != "" {
			if o.Claim, err = getOptional(ctx, reader, cr.Namespace, name, &corev1.PersistentVolumeClaim{}); err != nil {
				return err
			}
		}
	}
	if o.RouteURL, err = k.routeURL(ctx, reader, cr.Namespace, obs); err != nil {
		return err
	}
	cr.Status = status.LlamaStack(cr.Status, o)
	return nil
}

// routeURL is the external URL of the Route or Ingress, once its host is known.
func (k *LlamaStack) routeURL(ctx context.Context, reader client.Reader, ns string, obs Observation) (string, error) {
	if name := obs.Find("Route"); name != "" && k.APIReader != nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(routeGVK)
		route, err := getOptional(ctx, k.APIReader, ns, name, u)
		if err != nil || route == nil {
			return "", err
		}
		host, _, _ := unstructured.NestedString(route.Object, "spec", "host")
		if ingress, _, _ := unstructured.NestedSlice(route.Object, "status", "ingress"); len(ingress) > 0 {
			if m, ok := ingress[0].(map[string]any); ok {
				if h, ok := m["host"].(string); ok && h != "" {
					host = h
				}
			}
		}
		if host == "" {
			return "", nil
		}
		return "https://" + host, nil
	}
	if name := obs.Find("Ingress"); name != "" {
		ing, err := getOptional(ctx, reader, ns, name, &networkingv1.Ingress{})
		if err != nil || ing == nil {
			return "", err
		}
		host := ""
		if len(ing.Spec.Rules) > 0 {
			host = ing.Spec.Rules[0].Host
		}
		if host == "" && len(ing.Status.LoadBalancer.Ingress) > 0 {
			lb := ing.Status.LoadBalancer.Ingress[0]
			host = lb.Hostname
			if host == "" {
				host = lb.IP
			}
		}
		if host == "" {
			return "", nil
		}
		scheme := "http://"
		if len(ing.Spec.TLS) > 0 {
			scheme = "https://"
		}
		return scheme + strings.TrimSuffix(host, "."), nil
	}
	return "", nil
}

// getOptional reads an object; it returns nil without error when it does not exist.
func getOptional[T client.Object](ctx context.Context, reader client.Reader, ns, name string, obj T) (T, error) {
	var zero T
	err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err):
		return zero, nil
	default:
		return zero, fmt.Errorf("read %T %s/%s: %w", obj, ns, name, err)
	}
}

// Prepare implements Preparer: the merged CA bundle is written before the
// chart that mounts it is applied.
func (k *LlamaStack) Prepare(ctx context.Context, c client.Client, rec record.EventRecorder, obj client.Object, inputs any) error {
	in := inputs.(*llamaStackInputs)
	if in.trust == nil {
		return nil
	}
	return k.writeBundle(ctx, c, rec, obj.(*llamav1alpha1.LlamaStackDistribution), in.trust)
}

// Cleanup implements Preparer: the bundle ConfigMap is not part of the Helm
// release, so uninstalling removes it here (a garbage collector would follow
// its owner reference, but not every cluster runs one in time).
// Only the operator's own bundle is deleted (checked, then deleted with its
// UID as a precondition); a user's ConfigMap of that name is left alone.
func (k *LlamaStack) Cleanup(ctx context.Context, c client.Client, obj client.Object) error {
	cr := obj.(*llamav1alpha1.LlamaStackDistribution)
	name := naming.ChildName(cr.Name, "-ca-bundle")
	cm, err := getOptional(ctx, c, cr.Namespace, name, &corev1.ConfigMap{})
	if err != nil || cm == nil {
		return err
	}
	if err := bundleOwnership(cr).Check("ConfigMap "+cr.Namespace+"/"+name, cm.Labels, cm.Annotations, cm.OwnerReferences); err != nil {
		return nil
	}
	return client.IgnoreNotFound(c.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}))
}

// SharedConfigMaps implements ConfigMapReferrer: the settings ConfigMap.
func (k *LlamaStack) SharedConfigMaps() []string {
	if k.SettingsConfigMap == "" || k.OperatorNamespace == "" {
		return nil
	}
	return []string{k.OperatorNamespace + "/" + k.SettingsConfigMap}
}

// ConfigMapRefs implements ConfigMapReferrer.
func (*LlamaStack) ConfigMapRefs(obj client.Object) []string {
	return configMapRefs(obj.(*llamav1alpha1.LlamaStackDistribution))
}
