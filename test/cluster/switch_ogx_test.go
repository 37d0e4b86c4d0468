package cluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	must "github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
)

// Upstream's sample config/samples/example-withoutconfigmap.yaml
// (ogx-k8s-operator 1784464), unchanged.
const upstreamOGXWithStorage = `
apiVersion: ogx.io/v1beta1
kind: OGXServer
metadata:
  name: ogxserver-without-userconfig
spec:
  distribution:
    name: starter
  workload:
    storage:
      size: "10Gi"
      mountPath: "/.ogx"
    overrides:
      env:
      - name: OLLAMA_INFERENCE_MODEL
        value: "llama3.2:1b"
      - name: OLLAMA_URL
        value: "http://ollama-server-service.ollama-dist.svc.cluster.local:11434"
`

// upstreamOGXObjects are the objects ogx-k8s-operator 1784464 leaves for an
// OGXServer with storage, as its code makes them (controllers/manifests/
// base, pkg/deploy/kustomizer.go, controllers/resource_helper.go) and as its
// running operator was seen to leave them on the local cluster (2026-12-07):
// its three common labels, the CR as controller of each but the claim,
// which gets no owner reference (kustomizer.go createResource), the
// container "ogx" with the metrics port and its env, the NetworkPolicy it
// renders by default.
func upstreamOGXObjects(cr *ogxv1beta1.OGXServer) []client.Object {
	n, ns := cr.Name, cr.Namespace
	om := func(name string, controlled bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "ogx-operator", "app.kubernetes.io/part-of": "ogx", "ogx.io/watch": "true"}}
		if controlled {
			m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cr, ogxv1beta1.GroupVersion.WithKind("OGXServer"))}
		}
		return m
	}
	selector := map[string]string{"app": "ogx", "app.kubernetes.io/instance": n}
	one, fsGroup := int32(1), int64(1001)
	env := append([]corev1.EnvVar{{Name: "HF_HOME", Value: "/.ogx"}, {Name: "OGX_WORKERS", Value: "1"}, {Name: "OGX_PORT", Value: "8321"},
		{Name: "OGX_METRICS_ENDPOINT_ENABLED", Value: "1"}, {Name: "OGX_METRICS_HOST", Value: "0.0.0.0"}, {Name: "OGX_METRICS_PORT", Value: "9464"}}, cr.Spec.Workload.Overrides.Env...)
	tcp := corev1.ProtocolTCP
	port := func(p int32) *intstr.IntOrString { v := intstr.FromInt32(p); return &v }
	return []client.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: om(n+"-pvc", false), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		}},
		&corev1.ServiceAccount{ObjectMeta: om(n+"-sa", true)},
		&networkingv1.NetworkPolicy{ObjectMeta: om(n+"-network-policy", true), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector}, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}},
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ogx-k8s-operator-system"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: port(8321)}},
			}, {
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"network.openshift.io/policy-group": "monitoring"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: port(9464)}},
			}},
		}},
		&corev1.Service{ObjectMeta: om(n+"-service", true), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8321, TargetPort: intstr.FromInt32(8321)},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9464, TargetPort: intstr.FromInt32(9464)}}}},
		&appsv1.Deployment{ObjectMeta: om(n, true), Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: selector},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec: corev1.PodSpec{
					ServiceAccountName: n + "-sa",
					SecurityContext:    &corev1.PodSecurityContext{FSGroup: &fsGroup},
					Containers: []corev1.Container{{
						Name: "ogx", Image: "docker.io/ogxai/distribution-starter:latest", ImagePullPolicy: corev1.PullAlways,
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
						Ports: []corev1.ContainerPort{{ContainerPort: 8321}, {Name: "metrics", ContainerPort: 9464}},
						StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/v1/health", Port: intstr.FromInt32(8321)}},
							InitialDelaySeconds: 15, TimeoutSeconds: 30, FailureThreshold: 3, SuccessThreshold: 1},
						Env:          env,
						VolumeMounts: []corev1.VolumeMount{{Name: "ogx-storage", MountPath: "/.ogx"}},
					}},
					Volumes: []corev1.Volume{{Name: "ogx-storage", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n + "-pvc"}}}},
				},
			},
		}},
	}
}

// The switch from ogx-k8s-operator: its claim has no owner reference, and
// is taken over all the same because the CR's own Deployment mounts it;
// everything keeps its UID, one rollout at most, Ready; the preflight said
// so beforehand.
func TestSwitchFromUpstreamOGXTakesItsClaimOver(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-ogx", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))
	cr := &ogxv1beta1.OGXServer{}
	must.NoError(t, yaml.UnmarshalStrict([]byte(upstreamOGXWithStorage), cr))
	cr.Namespace = ns.Name
	must.NoError(t, k8s.Create(ctx, cr))
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, upstreamOGXObjects(cr))
	claim := &corev1.PersistentVolumeClaim{}
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cr.Name + "-pvc"}, claim))

	predicted, _ := preflightSays(t, "OGXServer "+ns.Name+"/"+cr.Name,
		"take over   PersistentVolumeClaim "+cr.Name+"-pvc: kept: same claim", "the CR's Deployment "+cr.Name+" mounts it",
		"take over   NetworkPolicy "+cr.Name+"-network-policy:")

	stop := startOperator(t)
	defer stop()
	waitReady(t, cr, func() []metav1.Condition { return cr.Status.Conditions })
	assertTakenOver(t, upstreamOGXObjects(cr), before, nil)
	volume := claim.Spec.VolumeName
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	assert.Equal(t, volume, claim.Spec.VolumeName, "the claim's volume kept")
	assert.Empty(t, claim.OwnerReferences, "the claim outlives the CR, as upstream meant")
	assertRollouts(t, dep, predicted)
}
