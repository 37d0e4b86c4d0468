package status

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func claim(size string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{}
	c.Name = "x-pvc"
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	c.Status.Phase = phase
	return c
}

func TestStorageCondition(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		name      string
		requested *resource.Quantity
		claim     *corev1.PersistentVolumeClaim
		status    metav1.ConditionStatus
		reason    string
	}{
		{"none requested", nil, nil, metav1.ConditionTrue, "NoStorageRequested"},
		{"not created", q("10Gi"), nil, metav1.ConditionFalse, "ClaimNotFound"},
		{"pending", q("10Gi"), claim("10Gi", ""), metav1.ConditionFalse, "ClaimPending"},
		{"bound", q("10Gi"), claim("10Gi", corev1.ClaimBound), metav1.ConditionTrue, "ClaimBound"},
		{"shrink refused", q("5Gi"), claim("10Gi", corev1.ClaimBound), metav1.ConditionFalse, "ShrinkRefused"},
		{"growing is fine", q("20Gi"), claim("10Gi", corev1.ClaimBound), metav1.ConditionTrue, "ClaimBound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StorageCondition(tt.requested, tt.claim)
			assert.Equal(t, tt.status, c.Status)
			assert.Equal(t, tt.reason, c.Reason)
			if tt.reason == "ShrinkRefused" {
				assert.Contains(t, c.Message, "set 10Gi or more")
			}
		})
	}
}

func TestServiceCondition(t *testing.T) {
	assert.Equal(t, metav1.ConditionTrue, ServiceCondition(true).Status)
	c := ServiceCondition(false)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "ServiceNotFound", c.Reason)
}

func TestURLs(t *testing.T) {
	route := func(spec, admitted string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		if spec != "" {
			_ = unstructured.SetNestedField(u.Object, spec, "spec", "host")
		}
		if admitted != "" {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"host": admitted}}, "status", "ingress")
		}
		return u
	}
	assert.Equal(t, "", RouteURL(nil))
	assert.Equal(t, "", RouteURL(route("", "")), "no host yet")
	assert.Equal(t, "https://a.example.com", RouteURL(route("a.example.com", "")))
	assert.Equal(t, "https://b.apps.example.com", RouteURL(route("a.example.com", "b.apps.example.com")), "the admitted host wins")

	ing := func(host string, tls bool, lb ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
		i := &networkingv1.Ingress{}
		if host != "" {
			i.Spec.Rules = []networkingv1.IngressRule{{Host: host}}
		}
		if tls {
			i.Spec.TLS = []networkingv1.IngressTLS{{}}
		}
		i.Status.LoadBalancer.Ingress = lb
		return i
	}
	assert.Equal(t, "", IngressURL(nil))
	assert.Equal(t, "", IngressURL(ing("", false)))
	assert.Equal(t, "http://llama.example.com", IngressURL(ing("llama.example.com", false)))
	assert.Equal(t, "https://llama.example.com", IngressURL(ing("llama.example.com", true)))
	assert.Equal(t, "http://lb.example.com", IngressURL(ing("", false, networkingv1.IngressLoadBalancerIngress{Hostname: "lb.example.com."})), "the root dot is dropped")
	assert.Equal(t, "http://10.0.0.1", IngressURL(ing("", false, networkingv1.IngressLoadBalancerIngress{IP: "10.0.0.1"})))
}
