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

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
)

// Upstream's sample config/samples/evalhub_v1alpha1_evalhub.yaml
// (trustyai-service-operator 11c335b) with the database its controller
// requires (it refuses a spec without one) and without its namespace.
const upstreamEvalHub = `
apiVersion: trustyai.opendatahub.io/v1alpha1
kind: EvalHub
metadata:
  name: evalhub-sample
spec:
  replicas: 2
  database:
    type: sqlite
  collections:
    - leaderboard-v2
  env:
    - name: LOG_LEVEL
      value: "INFO"
`

// upstreamEvalHubObjects are the server's objects trustyai-service-operator
// 11c335b leaves for an EvalHub, as its code makes them
// (controllers/evalhub: deployment.go, service.go, metrics_service.go,
// configmap.go, service_accounts.go): the CR as controller of each but the
// auth-reviewer ClusterRoleBinding, selector app: eval-hub, instance,
// component: api; and one of its RoleBindings, of a name this operator does
// not render.
func upstreamEvalHubObjects(cr *evalhubv1.EvalHub) []client.Object {
	n, ns := cr.Name, cr.Namespace
	ref := []metav1.OwnerReference{*metav1.NewControllerRef(cr, evalhubv1.GroupVersion.WithKind("EvalHub"))}
	om := func(name string, labels, annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations, OwnerReferences: ref}
	}
	api := map[string]string{"app": "eval-hub", "instance": n, "component": "api"}
	std := func(x string) map[string]string {
		return map[string]string{"app": "eval-hub", "app.kubernetes.io/name": x, "app.kubernetes.io/instance": n, "app.kubernetes.io/part-of": "eval-hub", "app.kubernetes.io/version": "1.39.0"}
	}
	two := int32(2)
	quarter := intstr.FromString("25%")
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: n + "-" + ns + "-auth-reviewer-crb", Labels: std(n + "-" + ns + "-auth-reviewer-crb")},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "trustyai-service-operator-evalhub-auth-reviewer-role"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n + "-service", Namespace: ns}}}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: om(n+"-service", std(n+"-service"), nil)},
		crb,
		&rbacv1.RoleBinding{ObjectMeta: om(n+"-job-writer-rb", std(n+"-job-writer-rb"), nil),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "trustyai-service-operator-evalhub-jobs-writer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n + "-service", Namespace: ns}}},
		&corev1.ConfigMap{ObjectMeta: om(n+"-config", nil, nil), Data: map[string]string{"config.yaml": "service:\n  port: 8444\n"}},
		&corev1.ConfigMap{ObjectMeta: om(n+"-service-ca", nil, map[string]string{"service.beta.openshift.io/inject-cabundle": "true"})},
		&appsv1.Deployment{ObjectMeta: om(n, nil, nil), Spec: appsv1.DeploymentSpec{
			Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: api},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &quarter, MaxSurge: &quarter}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: api},
				Spec: corev1.PodSpec{
					ServiceAccountName: n + "-service",
					Containers: []corev1.Container{{
						Name: "evalhub", Image: "quay.io/trustyai/eval-hub:latest",
						Env:          []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "INFO"}},
						Ports:        []corev1.ContainerPort{{ContainerPort: 8444, Name: "evalhub"}, {ContainerPort: 8081, Name: "metrics"}},
						VolumeMounts: []corev1.VolumeMount{{Name: "evalhub-config", MountPath: "/etc/evalhub"}},
					}, {
						Name: "kube-rbac-proxy", Image: "quay.io/brancz/kube-rbac-proxy:v0.18.0",
						Ports: []corev1.ContainerPort{{ContainerPort: 8443, Name: "https"}, {ContainerPort: 9443, Name: "proxy-healthz"}},
					}},
					Volumes: []corev1.Volume{{Name: "evalhub-config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: n + "-config"}}}}},
				},
			},
		}},
		&corev1.Service{ObjectMeta: om(n, api, map[string]string{"service.beta.openshift.io/serving-cert-secret-name": n + "-tls"}),
			Spec: corev1.ServiceSpec{Selector: api, Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 8443, TargetPort: intstr.FromString("https")}}}},
		&corev1.Service{ObjectMeta: om(n+"-metrics", map[string]string{"app": "eval-hub", "instance": n, "component": "metrics"}, nil),
			Spec: corev1.ServiceSpec{Selector: api, Ports: []corev1.ServicePort{{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 8081, TargetPort: intstr.FromString("metrics")}}}},
	}
}

// The switch from trustyai-service-operator's EvalHub: the server's objects
// of names this operator renders are taken over in place (same UIDs),
// Ready, one rollout at most as the preflight said; upstream's bindings of
// other names are left, listed by the preflight when namespaced.
func TestSwitchFromUpstreamEvalHub(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-evalhub", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))
	cr := &evalhubv1.EvalHub{}
	must.NoError(t, yaml.Unmarshal([]byte(upstreamEvalHub), cr))
	cr.APIVersion = evalhubv1.GroupVersion.String() // v1alpha1 is served with the same schema
	cr.Namespace = ns.Name
	cr.Finalizers = []string{"trustyai.opendatahub.io/evalhub-finalizer"}
	must.NoError(t, k8s.Create(ctx, cr))
	objs := upstreamEvalHubObjects(cr)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), objs[1]) }) // the ClusterRoleBinding
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, objs)

	predicted, _ := preflightSays(t, "EvalHub "+ns.Name+"/"+cr.Name,
		"take over   Deployment "+cr.Name+":", "take over   Service "+cr.Name+":", "take over   Service "+cr.Name+"-metrics:",
		"take over   ServiceAccount "+cr.Name+"-service:", "take over   ConfigMap "+cr.Name+"-config:",
		"finalizer   trustyai.opendatahub.io/evalhub-finalizer stays on the CR",
		"left        RoleBinding "+cr.Name+"-job-writer-rb: left as it is (still controlled by the CR, deleted with it)")

	stop := startOperator(t)
	defer stop()
	waitReady(t, cr, func() []metav1.Condition { return cr.Status.Conditions })
	assertTakenOver(t, objs, before, bindings)
	assertRollouts(t, dep, predicted)
}
