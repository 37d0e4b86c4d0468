package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	must "github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// Upstream's sample config/samples/trustyai_v1_trustyaiservice.yaml
// (trustyai-service-operator 11c335b), unchanged.
const upstreamTASWithPVC = `
apiVersion: trustyai.opendatahub.io/v1
kind: TrustyAIService
metadata:
  labels:
    app.kubernetes.io/name: trustyaiservice
    app.kubernetes.io/instance: trustyaiservice-sample
    app.kubernetes.io/part-of: trustyai-service-operator
    app.kubernetes.io/managed-by: kustomize
    app.kubernetes.io/created-by: trustyai-service-operator
  name: trustyaiservice-sample
spec:
  storage:
    format: "PVC"
    folder: "/inputs"
    size: "1Gi"
  data:
    filename: "data.csv"
    format: "CSV"
  metrics:
    schedule: "5s"
    batchSize: 5000
  replicas: 1
`

// upstreamTASObjects are the objects trustyai-service-operator 11c335b
// leaves for a TrustyAIService in PVC mode on plain Kubernetes, as its code
// makes them (controllers/tas: service_accounts.go, storage.go,
// deployment.go, templates/service/*.tmpl.yaml, kube_rbac_proxy_config.go):
// the CR as controller of each, its five labels with the version 1.39.0 in
// the Deployment's selector and the internal Service's; as its running
// operator was seen to leave them on the local cluster (2026-12-07): no port
// on the service container, ODH's kube-rbac-proxy image, the two TLS Secrets
// and the proxy's ConfigMap as volumes. Its finalizer is on the CR.
func upstreamTASObjects(cr *trustyv1.TrustyAIService) []client.Object {
	n, ns := cr.Name, cr.Namespace
	labels := map[string]string{"app": n, "app.kubernetes.io/instance": n, "app.kubernetes.io/name": n, "app.kubernetes.io/part-of": "trustyai", "app.kubernetes.io/version": "1.39.0"}
	om := func(name string, l map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cr, trustyv1.GroupVersion.WithKind("TrustyAIService"))}}
	}
	withTAS := func(extra map[string]string) map[string]string {
		out := map[string]string{"trustyai-service-name": n}
		for k, v := range labels {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	one := int32(1)
	maxUnavailable, maxSurge := intstr.FromInt32(1), intstr.FromInt32(0)
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: om(n+"-"+ns+"-proxy-rolebinding", nil),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "trustyai-service-operator-proxy-role"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n + "-proxy", Namespace: ns}}}
	crb.Namespace = ""
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: om(n+"-proxy", map[string]string{"app": "trustyai", "app.kubernetes.io/name": n + "-proxy", "app.kubernetes.io/instance": n, "app.kubernetes.io/part-of": "trustyai", "app.kubernetes.io/version": "1.39.0"})},
		crb,
		&corev1.Service{ObjectMeta: func() metav1.ObjectMeta {
			m := om(n+"-tls", withTAS(nil))
			m.Annotations = map[string]string{"service.beta.openshift.io/serving-cert-secret-name": n + "-tls"}
			return m
		}(), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": n},
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(8443)}}}},
		&corev1.ConfigMap{ObjectMeta: om(n+"-kube-rbac-proxy-config", withTAS(map[string]string{"app.kubernetes.io/component": "kube-rbac-proxy"})),
			Data: map[string]string{"config-file.yaml": "authorization:\n  resourceAttributes:\n    namespace: " + ns + "\n    apiVersion: v1\n    resource: services\n    subresource: proxy\n    name: " + n + "\n    verb: get\n"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: om(n+"-pvc", nil), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}},
		&appsv1.Deployment{ObjectMeta: func() metav1.ObjectMeta {
			m := om(n, labels)
			m.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
			return m
		}(), Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"prometheus.io/path": "/q/metrics", "prometheus.io/scheme": "http", "prometheus.io/scrape": "true"}},
				Spec: corev1.PodSpec{
					ServiceAccountName: n + "-proxy",
					Containers: []corev1.Container{{
						Name: "trustyai-service", Image: "quay.io/trustyai/trustyai-service:latest",
						Env: []corev1.EnvVar{{Name: "SERVICE_STORAGE_FORMAT", Value: "PVC"}, {Name: "STORAGE_DATA_FILENAME", Value: "data.csv"},
							{Name: "STORAGE_DATA_FOLDER", Value: "/inputs"}, {Name: "SERVICE_DATA_FORMAT", Value: "CSV"}, {Name: "QUARKUS_HIBERNATE_ORM_ACTIVE", Value: "false"},
							{Name: "SERVICE_METRICS_SCHEDULE", Value: "5s"}, {Name: "SERVICE_BATCH_SIZE", Value: "5000"}},
						VolumeMounts: []corev1.VolumeMount{{Name: "volume", MountPath: "/inputs"}},
					}, {
						Name: "kube-rbac-proxy", Image: "quay.io/opendatahub/odh-kube-rbac-proxy:odh-stable",
						Ports: []corev1.ContainerPort{{ContainerPort: 8443, Name: "https"}, {ContainerPort: 9443, Name: "proxy-healthz"}},
					}},
					Volumes: []corev1.Volume{{Name: "volume", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n + "-pvc"}}},
						{Name: n + "-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n + "-tls"}}},
						{Name: n + "-internal", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n + "-internal"}}},
						{Name: "kube-rbac-proxy-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: n + "-kube-rbac-proxy-config"}}}}},
				},
			},
		}},
		&corev1.Service{ObjectMeta: func() metav1.ObjectMeta {
			m := om(n, labels)
			m.Annotations = map[string]string{"prometheus.io/path": "/q/metrics", "prometheus.io/scheme": "http", "prometheus.io/scrape": "true", "service.beta.openshift.io/serving-cert-secret-name": n + "-internal"}
			return m
		}(), Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(4443)}}}},
	}
}

// The switch from trustyai-service-operator: upstream's PVC-mode sample with
// its objects is taken over in place (same UIDs, the claim's volume, the
// Deployment's selector with upstream's version label kept: a selector is
// immutable), Ready; its ClusterRoleBinding, of a name this operator does
// not render, is left; the preflight said what would happen.
func TestSwitchFromUpstreamTrustyAI(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-tas", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))
	cr := &trustyv1.TrustyAIService{}
	must.NoError(t, yaml.UnmarshalStrict([]byte(upstreamTASWithPVC), cr))
	cr.Namespace = ns.Name
	cr.Finalizers = []string{"trustyai.opendatahub.io/finalizer"}
	must.NoError(t, k8s.Create(ctx, cr))
	objs := upstreamTASObjects(cr)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), objs[1]) }) // the ClusterRoleBinding
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, objs)
	claim := &corev1.PersistentVolumeClaim{}
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cr.Name + "-pvc"}, claim))

	predicted, kubeconfig := preflightSays(t, "TrustyAIService "+ns.Name+"/"+cr.Name,
		"take over   ServiceAccount "+cr.Name+"-proxy:", "take over   ConfigMap "+cr.Name+"-kube-rbac-proxy-config:",
		"take over   PersistentVolumeClaim "+cr.Name+"-pvc: kept: same claim", "take over   Service "+cr.Name+":",
		"take over   Service "+cr.Name+"-tls:", "take over   Deployment "+cr.Name+":",
		"finalizer   trustyai.opendatahub.io/finalizer stays on the CR")

	stop := startOperator(t)
	defer stop()
	env.Eventually(t, "the TrustyAIService Ready", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		if cr.Status.Phase != trustyv1.PhaseReady {
			return fmt.Errorf("phase %q, conditions %+v", cr.Status.Phase, cr.Status.Conditions)
		}
		return nil
	})
	assertTakenOver(t, objs, before, bindings)
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep))
	assert.Equal(t, "1.39.0", dep.Spec.Selector.MatchLabels["app.kubernetes.io/version"], "the selector kept")
	volume := claim.Spec.VolumeName
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	assert.Equal(t, volume, claim.Spec.VolumeName, "the claim's volume kept")
	assert.Contains(t, cr.Finalizers, "trustyai.opendatahub.io/finalizer", "upstream's finalizer is upstream's")
	assertRollouts(t, dep, predicted)

	// Upstream's finalizer, as docs/switching.md has it removed once
	// upstream is stopped: then deleting the CR is not stuck (this
	// operator's finalizer runs its cleanup) and the claim stays.
	out := framework.RunDocCommand(t, "docs/switching.md", "remove-finalizer", kubeconfig)
	assert.Contains(t, out, "TrustyAIService "+ns.Name+"/"+cr.Name+": removed finalizer trustyai.opendatahub.io/finalizer")
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr))
	assert.Equal(t, []string{release.Finalizer}, cr.Finalizers, "only this operator's finalizer left")
	must.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the TrustyAIService deleted", func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), &trustyv1.TrustyAIService{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	assert.Equal(t, volume, claim.Spec.VolumeName, "the claim and its data outlive the CR")
}
