package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// LlamaStack adapts LlamaStackDistribution to the release reconciler.
type LlamaStack struct {
	// Distributions maps distribution names to images.
	Distributions distributions.Table
	// OperatorVersion is reported in status.version.operatorVersion.
	OperatorVersion string
}

var _ Kind = (*LlamaStack)(nil)

// GroupVersionKind implements Kind.
func (*LlamaStack) GroupVersionKind() schema.GroupVersionKind {
	return llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind)
}

// NewObject implements Kind.
func (*LlamaStack) NewObject() client.Object { return &llamav1alpha1.LlamaStackDistribution{} }

// ReleasePrefix implements Kind.
func (*LlamaStack) ReleasePrefix() string { return "llsd" }

// OwnedTypes implements Kind.
func (*LlamaStack) OwnedTypes() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}, &corev1.PersistentVolumeClaim{}}
}

// Values implements Kind.
func (k *LlamaStack) Values(_ context.Context, obj client.Object) (map[string]any, error) {
	v, err := values.LlamaStack(obj.(*llamav1alpha1.LlamaStackDistribution), values.LlamaStackInputs{
		Distributions: k.Distributions,
		CommonLabels:  map[string]string{LabelManaged: "true"},
	})
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
func (k *LlamaStack) SetStatus(ctx context.Context, reader client.Reader, obj client.Object, obs Observation) error {
	cr := obj.(*llamav1alpha1.LlamaStackDistribution)
	var dep *appsv1.Deployment
	if name := obs.Find("Deployment"); name != "" {
		d := &appsv1.Deployment{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: name}, d)
		switch {
		case err == nil:
			dep = d
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("read Deployment %s: %w", name, err)
		}
	}
	var serviceURL string
	if name := obs.Find("Service"); name != "" {
		port := cr.Spec.Server.ContainerSpec.Port
		if port == 0 {
			port = llamav1alpha1.DefaultServerPort
		}
		serviceURL = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", name, cr.Namespace, port)
	}
	active := cr.Spec.Server.Distribution.Name
	if active == "" {
		active = cr.Spec.Server.Distribution.Image
	}
	cr.Status = status.LlamaStack(cr.Status, status.LlamaStackObserved{
		Generation:             cr.Generation,
		Replicas:               cr.Spec.Replicas,
		Failure:                obs.Failure,
		Applied:                obs.Applied,
		Deployment:             dep,
		ServiceURL:             serviceURL,
		OperatorVersion:        k.OperatorVersion,
		ActiveDistribution:     active,
		AvailableDistributions: k.Distributions,
		Now:                    obs.Now,
	})
	return nil
}
