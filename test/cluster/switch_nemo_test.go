package cluster

import (
	"context"
	"testing"

	must "github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
)

// A NemoGuardrails with kube-rbac-proxy, as upstream's controller tests
// and docs write one (upstream's own sample names a kind, NemoGuardrail,
// that its CRD does not serve).
const upstreamNemoWithAuth = `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: NemoGuardrails
metadata:
  name: guardrails
  annotations:
    security.opendatahub.io/enable-auth: "true"
spec:
  nemoConfigs:
    - name: safety
      configMaps: [nemo-config]
      default: true
`

// upstreamNemoObjects are the objects trustyai-service-operator 11c335b
// leaves for a NemoGuardrails with auth, as its code makes them
// (controllers/nemo_guardrails: controller.go, deployment.go, ca.go,
// templates/*.tmpl.yaml; controllers/utils service_accounts.go, roles.go):
// the CR as controller of each, the Deployment's selector app: <name>.
func upstreamNemoObjects(cr *nemov1alpha1.NemoGuardrails) []client.Object {
	n, ns := cr.Name, cr.Namespace
	om := func(name string, labels, annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cr, nemov1alpha1.GroupVersion.WithKind("NemoGuardrails"))}}
	}
	short := map[string]string{"app": n, "component": n}
	pod := map[string]string{"app": n, "component": n, "deploy-name": n, "app.kubernetes.io/instance": n, "app.kubernetes.io/name": n, "app.kubernetes.io/part-of": "trustyai"}
	authLabels := map[string]string{"app.kubernetes.io/managed-by": "trustyai-service-operator", "app": n, "component": ns}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: om(n+"-"+ns+"-auth-delegator", authLabels, nil),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n + "-serviceaccount", Namespace: ns}}}
	crb.Namespace = ""
	one := int32(1)
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: om(n+"-ca-bundle", short, map[string]string{"service.beta.openshift.io/inject-cabundle": "true"})},
		&corev1.ConfigMap{ObjectMeta: om(n+"-rbac-proxy-config", map[string]string{"app": n, "app.kubernetes.io/instance": n, "app.kubernetes.io/name": n, "app.kubernetes.io/part-of": "trustyai", "app.kubernetes.io/component": "kube-rbac-proxy", "component": "gateway"}, nil),
			Data: map[string]string{"config-file.yaml": "authorization:\n  resourceAttributes:\n    namespace: " + ns + "\n    resource: services\n    subresource: proxy\n    name: " + n + "\n    verb: get\n"}},
		&corev1.ServiceAccount{ObjectMeta: om(n+"-serviceaccount", authLabels, nil)},
		crb,
		&appsv1.Deployment{ObjectMeta: om(n, pod, nil), Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pod},
				Spec: corev1.PodSpec{
					ServiceAccountName: n + "-serviceaccount",
					Containers: []corev1.Container{{
						Name: "nemo-guardrails", Image: "quay.io/trustyai/nemo-guardrails-server:latest",
						Env:          []corev1.EnvVar{{Name: "CONFIG_ID", Value: "safety"}},
						Ports:        []corev1.ContainerPort{{ContainerPort: 8000}},
						VolumeMounts: []corev1.VolumeMount{{Name: "safety-nemo-config-volume", MountPath: "/app/config/safety"}},
					}, {
						Name: "kube-rbac-proxy", Image: "quay.io/brancz/kube-rbac-proxy:v0.18.0",
						Ports: []corev1.ContainerPort{{ContainerPort: 8443, Name: "https"}, {ContainerPort: 9444, Name: "proxy-healthz"}},
					}},
					Volumes: []corev1.Volume{{Name: "safety-nemo-config-volume", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nemo-config"}}}}},
				},
			},
		}},
		&corev1.Service{ObjectMeta: om(n, short, map[string]string{"service.beta.openshift.io/serving-cert-secret-name": n + "-tls"}),
			Spec: corev1.ServiceSpec{Selector: short, Ports: []corev1.ServicePort{{Name: n, Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(8443)}}}},
	}
}

// The switch from trustyai-service-operator's NemoGuardrails: every object
// of a name this operator renders is taken over in place (same UIDs),
// Ready, one rollout at most as the preflight said; upstream's
// ClusterRoleBinding of another name is left; its finalizer is listed.
func TestSwitchFromUpstreamNemoGuardrails(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-nemo", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))
	must.NoError(t, k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "nemo-config"},
		Data: map[string]string{"config.yaml": "models: []\n"}}))
	cr := &nemov1alpha1.NemoGuardrails{}
	must.NoError(t, yaml.UnmarshalStrict([]byte(upstreamNemoWithAuth), cr))
	cr.Namespace = ns.Name
	cr.Finalizers = []string{"trustyai.opendatahub.io/nemo-guardrails-finalizer"}
	must.NoError(t, k8s.Create(ctx, cr))
	objs := upstreamNemoObjects(cr)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), objs[3]) }) // the ClusterRoleBinding
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, objs)

	predicted, _ := preflightSays(t, "NemoGuardrails "+ns.Name+"/"+cr.Name,
		"take over   Deployment "+cr.Name+":", "take over   Service "+cr.Name+":",
		"take over   ServiceAccount "+cr.Name+"-serviceaccount:", "take over   ConfigMap "+cr.Name+"-rbac-proxy-config:",
		"finalizer   trustyai.opendatahub.io/nemo-guardrails-finalizer stays on the CR")

	stop := startOperator(t)
	defer stop()
	waitReady(t, cr, func() []metav1.Condition { return cr.Status.Conditions })
	assertTakenOver(t, objs, before, bindings)
	assertRollouts(t, dep, predicted)
}
