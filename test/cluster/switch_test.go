package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	must "github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// Upstream's sample config/samples/example-withoutconfigmap.yaml
// (llama-stack-k8s-operator 7735e43), unchanged.
const upstreamLLSDWithStorage = `
apiVersion: llamastack.io/v1alpha1
kind: LlamaStackDistribution
metadata:
  name: llamastack-without-userconfig
spec:
  replicas: 1
  server:
    distribution:
      name: starter
    containerSpec:
      env:
      - name: OLLAMA_INFERENCE_MODEL
        value: "llama3.2:1b"
      - name: OLLAMA_URL
        value: "http://ollama-server-service.ollama-dist.svc.cluster.local:11434"
    storage:
      size: "10Gi"  # Optional - defaults to 10Gi
      mountPath: "/home/lls/.lls"  # Optional - defaults to /.llama
`

// upstreamLLSDObjects are the objects llama-stack-k8s-operator 7735e43
// leaves for a LlamaStackDistribution with storage, as its code makes them
// (controllers/manifests/base, pkg/deploy/kustomizer.go,
// controllers/resource_helper.go) and as its running operator was seen to
// leave them on the local cluster (2026-12-07): its three common labels on
// each, the CR as controller, the Deployment named as the CR and the others
// <name>-<kind>, the startup probe's 30 s timeout, images pulled Always.
// (It creates them as field manager "manager" and then applies them as one
// named after the CR; the takeover does not depend on either.)
func upstreamLLSDObjects(cr *llamav1alpha1.LlamaStackDistribution) []client.Object {
	n, ns := cr.Name, cr.Namespace
	common := func(extra map[string]string) map[string]string {
		l := map[string]string{"app.kubernetes.io/managed-by": "llama-stack-operator", "app.kubernetes.io/part-of": "llama-stack", "llamastack.io/watch": "true"}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: common(nil),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cr, llamav1alpha1.GroupVersion.WithKind("LlamaStackDistribution"))}}
	}
	selector := map[string]string{"app": "llama-stack", "app.kubernetes.io/instance": n}
	one, fsGroup := int32(1), int64(1001)
	mount := cr.Spec.Server.Storage.MountPath
	env := append([]corev1.EnvVar{{Name: "HF_HOME", Value: mount}, {Name: "LLS_WORKERS", Value: "1"}, {Name: "LLS_PORT", Value: "8321"},
		{Name: "LLAMA_STACK_CONFIG", Value: "/etc/llama-stack/config.yaml"}}, cr.Spec.Server.ContainerSpec.Env...)
	return []client.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: om(n + "-pvc"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		}},
		&corev1.ServiceAccount{ObjectMeta: om(n + "-sa")},
		&corev1.Service{ObjectMeta: om(n + "-service"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8321, TargetPort: intstr.FromInt32(8321)}}}},
		&appsv1.Deployment{ObjectMeta: om(n), Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: selector},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec: corev1.PodSpec{
					ServiceAccountName: n + "-sa",
					SecurityContext:    &corev1.PodSecurityContext{FSGroup: &fsGroup},
					Containers: []corev1.Container{{
						Name: "llama-stack", Image: "docker.io/llamastack/distribution-starter:latest", ImagePullPolicy: corev1.PullAlways,
						Ports: []corev1.ContainerPort{{ContainerPort: 8321}},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
						StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/v1/health", Port: intstr.FromInt32(8321)}},
							InitialDelaySeconds: 15, TimeoutSeconds: 30, FailureThreshold: 3, SuccessThreshold: 1},
						Env:          env,
						VolumeMounts: []corev1.VolumeMount{{Name: "lls-storage", MountPath: mount}},
					}},
					Volumes: []corev1.Volume{{Name: "lls-storage", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n + "-pvc"}}}},
				},
			},
		}},
	}
}

// bindClaim plays a provisioner (the local cluster has none): a static
// volume pre-bound to the claim.
func bindClaim(t *testing.T, ns, claim, size string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns + "/" + claim}},
		ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
	}}
	must.NoError(t, k8s.Create(context.Background(), pv))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), pv) })
}

// serveAsUpstream creates the objects an upstream operator left for a CR
// named name (its claim <name>-pvc bound to a volume, when it has one) and
// waits for its Deployment <name> to serve; it returns each object's UID by
// "type name".
func serveAsUpstream(t *testing.T, ns, name string, objs []client.Object) (map[string]types.UID, *appsv1.Deployment) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if _, ok := o.(*corev1.PersistentVolumeClaim); ok {
			bindClaim(t, ns, o.GetName(), "10Gi")
		}
	}
	before := map[string]types.UID{}
	for _, o := range objs {
		must.NoError(t, k8s.Create(ctx, o, client.FieldOwner("manager")))
		before[fmt.Sprintf("%T %s", o, o.GetName())] = o.GetUID()
	}
	dep := &appsv1.Deployment{}
	env.Eventually(t, "upstream's server available", func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		if dep.Status.AvailableReplicas < 1 {
			pods := &corev1.PodList{}
			_ = k8s.List(ctx, pods, client.InNamespace(ns))
			var seen []string
			for _, p := range pods.Items {
				seen = append(seen, fmt.Sprintf("%s %s %v", p.Name, p.Status.Phase, p.Status.Conditions))
			}
			pvc := &corev1.PersistentVolumeClaim{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-pvc"}, pvc)
			return fmt.Errorf("%d available; conditions %v; pods %v; claim %s", dep.Status.AvailableReplicas, dep.Status.Conditions, seen, pvc.Status.Phase)
		}
		return nil
	})
	return before, dep
}

// replicaSetsOf counts the ReplicaSets of a Deployment (one per rollout).
func replicaSetsOf(t *testing.T, d *appsv1.Deployment) int {
	t.Helper()
	rss := &appsv1.ReplicaSetList{}
	must.NoError(t, k8s.List(context.Background(), rss, client.InNamespace(d.Namespace)))
	n := 0
	for _, rs := range rss.Items {
		if metav1.IsControlledBy(&rs, d) {
			n++
		}
	}
	return n
}

// The switch from llama-stack-k8s-operator on a live cluster: a
// LlamaStackDistribution its operator served (upstream's sample with
// storage, its objects as upstream makes them, its pod running and its
// claim bound) is taken over in place when this operator starts: Ready,
// every object the same (UIDs, the Service's ClusterIP, the claim's
// volume), at most one rollout. A same-named object of a user (no
// controller reference to the CR) stays a NameConflict, and every object in
// the way is named at once, a claim never to be deleted.
func TestSwitchFromUpstreamTakesItsObjectsOver(t *testing.T) {
	ctx := context.Background()
	// Upstream's pod (no securityContext but fsGroup) passes Pod Security
	// "baseline", not the local cluster's default "restricted": a namespace
	// where upstream serves allows it.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "switch-llsd", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	must.NoError(t, k8s.Create(ctx, ns))

	// Upstream's operator served the CR: its objects, its pod, its claim.
	cr := &llamav1alpha1.LlamaStackDistribution{}
	must.NoError(t, yaml.UnmarshalStrict([]byte(upstreamLLSDWithStorage), cr))
	cr.Namespace = ns.Name
	must.NoError(t, k8s.Create(ctx, cr))
	before, dep := serveAsUpstream(t, ns.Name, cr.Name, upstreamLLSDObjects(cr))
	svc := &corev1.Service{}
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cr.Name + "-service"}, svc))
	clusterIP := svc.Spec.ClusterIP
	claim := &corev1.PersistentVolumeClaim{}
	env.Eventually(t, "the claim bound", func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: cr.Name + "-pvc"}, claim); err != nil {
			return err
		}
		if claim.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim %s", claim.Status.Phase)
		}
		return nil
	})

	// A second CR that upstream served too, but whose Service and claim are
	// a user's (no controller reference): the Service is in the way, never
	// taken; the claim, which the CR's own Deployment mounts, is the CR's
	// data and would be taken over with it (guard.MountsClaim).
	taken := cr.DeepCopy()
	taken.ObjectMeta = metav1.ObjectMeta{Namespace: ns.Name, Name: "taken"}
	must.NoError(t, k8s.Create(ctx, taken))
	for _, o := range upstreamLLSDObjects(taken) {
		switch o.(type) {
		case *corev1.Service, *corev1.PersistentVolumeClaim:
			o.SetOwnerReferences(nil)
			o.SetLabels(nil)
		}
		must.NoError(t, k8s.Create(ctx, o, client.FieldOwner("manager")))
	}
	bindClaim(t, ns.Name, "taken-pvc", "10Gi")
	// A third CR with a user's Service and claim of its names and nothing
	// of upstream's: both in the way, named at once, the claim never to be
	// deleted.
	userOnly := cr.DeepCopy()
	userOnly.ObjectMeta = metav1.ObjectMeta{Namespace: ns.Name, Name: "user-only"}
	must.NoError(t, k8s.Create(ctx, userOnly))
	must.NoError(t, k8s.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "user-only-service"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}))
	must.NoError(t, k8s.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "user-only-pvc"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}))

	// The preflight, as docs/switching.md has the administrator run it
	// before the switch: what it predicts is checked against what happens.
	kubeconfig := framework.AdminKubeconfig(t, config)
	preflight := framework.RunDocCommand(t, "docs/switching.md", "preflight", kubeconfig)
	section := crSection(preflight, "LlamaStackDistribution "+ns.Name+"/"+cr.Name)
	for _, want := range []string{
		"take over   PersistentVolumeClaim " + cr.Name + "-pvc: kept: same claim",
		"take over   ServiceAccount " + cr.Name + "-sa",
		"take over   Service " + cr.Name + "-service: kept: same Service, same ClusterIP (" + clusterIP + ")",
		"take over   Deployment " + cr.Name + ":",
		"after the switch: reconciled",
	} {
		assert.Contains(t, section, want, "preflight:\n%s", preflight)
	}
	predicted := 0
	if strings.Contains(section, "rolls out once") {
		predicted = 1
	} else {
		assert.Contains(t, section, "no rollout", "preflight:\n%s", preflight)
	}
	takenSection := crSection(preflight, "LlamaStackDistribution "+ns.Name+"/taken")
	for _, want := range []string{
		"in the way  Service taken-service:", "take over   PersistentVolumeClaim taken-pvc:", "the CR's Deployment taken mounts it",
		"take over   Deployment taken:", "NameConflict naming the 1 object(s) in the way",
	} {
		assert.Contains(t, takenSection, want, "preflight:\n%s", preflight)
	}
	userSection := crSection(preflight, "LlamaStackDistribution "+ns.Name+"/user-only")
	for _, want := range []string{
		"in the way  Service user-only-service:", "in the way  PersistentVolumeClaim user-only-pvc:", "do not delete it",
		"create      Deployment user-only:", "NameConflict naming the 2 object(s) in the way",
	} {
		assert.Contains(t, userSection, want, "preflight:\n%s", preflight)
	}
	t.Logf("preflight:\n%s", section)

	var once sync.Once
	stopOperator := startOperator(t)
	stop := func() { once.Do(stopOperator) }
	defer stop()

	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 0, 1)
	c := meta.FindStatusCondition(cr.Status.Conditions, status.TypeReconciled)
	must.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status, c.Message)
	for _, o := range upstreamLLSDObjects(cr) {
		key := fmt.Sprintf("%T %s", o, o.GetName())
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(o), o), key)
		assert.Equal(t, before[key], o.GetUID(), "%s kept (same UID)", key)
		assert.Equal(t, "true", o.GetLabels()[release.LabelManaged], "%s is the operator's now", key)
		if _, isClaim := o.(*corev1.PersistentVolumeClaim); isClaim {
			// As every claim of the operator: it outlives the CR.
			assert.Empty(t, o.GetOwnerReferences(), "the claim is not deleted with the CR")
			assert.Equal(t, ns.Name+"/"+cr.Name, o.GetAnnotations()["operator-sdk/primary-resource"])
			continue
		}
		assert.True(t, metav1.IsControlledBy(o, cr), "%s still the CR's", key)
	}
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(svc), svc))
	assert.Equal(t, clusterIP, svc.Spec.ClusterIP, "the Service's ClusterIP kept")
	volume := claim.Spec.VolumeName
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	assert.Equal(t, volume, claim.Spec.VolumeName, "the claim's volume kept")
	assert.Equal(t, corev1.ClaimBound, claim.Status.Phase)
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep))
	if os.Getenv("SWITCH_DEBUG") != "" {
		rss := &appsv1.ReplicaSetList{}
		must.NoError(t, k8s.List(ctx, rss, client.InNamespace(ns.Name)))
		for _, rs := range rss.Items {
			b, _ := json.MarshalIndent(rs.Spec.Template, "", " ")
			t.Logf("RS %s rev %s:\n%s", rs.Name, rs.Annotations["deployment.kubernetes.io/revision"], b)
		}
	}
	rollouts := replicaSetsOf(t, dep) - 1
	t.Logf("rollouts of the taken-over Deployment: %d (the preflight said %d)", rollouts, predicted)
	assert.LessOrEqual(t, rollouts, 1, "at most one rollout")
	assert.Equal(t, predicted, rollouts, "the preflight predicted the rollouts")

	// The user's objects: named at once, the claim not to be deleted.
	env.Eventually(t, "the second CR's NameConflict", func() error {
		got := &llamav1alpha1.LlamaStackDistribution{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(taken), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, status.TypeReconciled)
		if c == nil || c.Reason != status.ReasonNameConflict {
			return fmt.Errorf("Reconciled %+v", c)
		}
		if !strings.Contains(c.Message, "Service "+ns.Name+"/taken-service") || strings.Contains(c.Message, "taken-pvc") {
			return fmt.Errorf("message %q: want the Service named, not the claim the CR's Deployment mounts", c.Message)
		}
		// While refused, the status reads what runs, whoever made it:
		// upstream's Deployment serving, the user's Service and bound claim.
		for typ, reason := range map[string]string{"DeploymentReady": "MinimumReplicasAvailable", "ServiceReady": "ServiceCreated", "StorageReady": "ClaimBound"} {
			if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Reason != reason {
				return fmt.Errorf("%s %+v, want reason %s", typ, c, reason)
			}
		}
		if got.Status.AvailableReplicas != 1 {
			return fmt.Errorf("availableReplicas %d, want 1", got.Status.AvailableReplicas)
		}
		return nil
	})
	env.Eventually(t, "the third CR's NameConflict", func() error {
		got := &llamav1alpha1.LlamaStackDistribution{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(userOnly), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, status.TypeReconciled)
		if c == nil || c.Reason != status.ReasonNameConflict {
			return fmt.Errorf("Reconciled %+v", c)
		}
		for _, want := range []string{"Service " + ns.Name + "/user-only-service", "PersistentVolumeClaim " + ns.Name + "/user-only-pvc", "do not delete it"} {
			if !strings.Contains(c.Message, want) {
				return fmt.Errorf("message %q lacks %q", c.Message, want)
			}
		}
		return nil
	})
	for _, name := range []string{"taken-service", "user-only-service"} {
		userSvc := &corev1.Service{}
		must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, userSvc))
		assert.NotContains(t, userSvc.Labels, release.LabelManaged, "a user's object is never taken")
	}
	userClaim := &corev1.PersistentVolumeClaim{}
	must.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "user-only-pvc"}, userClaim))
	assert.NotContains(t, userClaim.Labels, release.LabelManaged, "a user's claim is never taken")

	// The way back (docs/switching.md): this operator stopped, switch-back
	// as written. No finalizer of ours is left; every object has the labels
	// upstream's cache selects by and, but the claim, the CR as its
	// controller (upstream patches only those).
	stop()
	back := framework.RunDocCommand(t, "docs/switching.md", "switch-back", kubeconfig)
	t.Logf("switch-back:\n%s", back)
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr))
	assert.NotContains(t, cr.Finalizers, release.Finalizer, "no finalizer of ours left")
	upstreamLabels := map[string]string{"app.kubernetes.io/managed-by": "llama-stack-operator", "app.kubernetes.io/part-of": "llama-stack", "llamastack.io/watch": "true"}
	for _, o := range upstreamLLSDObjects(cr) {
		key := fmt.Sprintf("%T %s", o, o.GetName())
		must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(o), o), key)
		assert.Equal(t, before[key], o.GetUID(), "%s kept (same UID)", key)
		for k, v := range upstreamLabels {
			assert.Equal(t, v, o.GetLabels()[k], "%s labelled %s for upstream", key, k)
		}
		if _, isClaim := o.(*corev1.PersistentVolumeClaim); !isClaim {
			assert.True(t, metav1.IsControlledBy(o, cr), "%s still the CR's", key)
		}
	}
	// And forth again, as after the documented way back, which deletes the
	// operator's namespace and with it the release records: the objects
	// carry the operator's marks but upstream's managed-by, which Helm
	// refuses to adopt into an install; the gate marks them again first.
	must.NoError(t, k8s.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(framework.OperatorNamespace),
		client.MatchingLabels{release.LabelOwnerUID: string(cr.UID)}))
	again := startOperator(t)
	env.Eventually(t, "Ready again after a switch back and forth", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cr.Status.Conditions, status.TypeReconciled)
		r := meta.FindStatusCondition(cr.Status.Conditions, status.TypeReady)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != cr.Generation || r == nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("Reconciled %+v, Ready %+v", c, r)
		}
		records := &corev1.ConfigMapList{}
		if err := k8s.List(ctx, records, client.InNamespace(framework.OperatorNamespace), client.MatchingLabels{release.LabelOwnerUID: string(cr.UID)}); err != nil {
			return err
		}
		if len(records.Items) == 0 {
			return fmt.Errorf("no release record yet")
		}
		return nil
	})
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep))
	assert.Equal(t, before[fmt.Sprintf("%T %s", dep, dep.Name)], dep.UID, "the Deployment kept")
	assert.Equal(t, "Helm", dep.Labels["app.kubernetes.io/managed-by"])
	again()
	framework.RunDocCommand(t, "docs/switching.md", "switch-back", kubeconfig)
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr))
	assert.NotContains(t, cr.Finalizers, release.Finalizer)

	// Deleting the CR afterwards is not stuck, and the claim keeps the data.
	must.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the CR deleted", func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), &llamav1alpha1.LlamaStackDistribution{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	must.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	assert.Equal(t, volume, claim.Spec.VolumeName, "the claim and its volume outlive the CR")
}

// crSection is the preflight's lines of one CR ("Kind namespace/name").
func crSection(out, header string) string {
	i := strings.Index(out, header+"\n")
	if i < 0 {
		return ""
	}
	rest := out[i+len(header)+1:]
	end := len(rest)
	for j, line := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(line, "  ") {
			end = len(strings.Join(strings.SplitAfter(rest, "\n")[:j], ""))
			break
		}
	}
	return rest[:end]
}

// preflightSays runs the preflight as docs/switching.md has it (with the
// administrator's kubeconfig, returned), checks that the CR's section holds
// every line of wants, and returns the rollouts it predicts (0 or 1).
func preflightSays(t *testing.T, header string, wants ...string) (predicted int, kubeconfig string) {
	t.Helper()
	kubeconfig = framework.AdminKubeconfig(t, config)
	preflight := framework.RunDocCommand(t, "docs/switching.md", "preflight", kubeconfig)
	section := crSection(preflight, header)
	for _, want := range append(wants, "after the switch: reconciled") {
		assert.Contains(t, section, want, "preflight:\n%s", preflight)
	}
	assert.Regexp(t, "rolls out once|no rollout", section)
	if strings.Contains(section, "rolls out once") {
		predicted = 1
	}
	t.Logf("preflight:\n%s", section)
	return predicted, kubeconfig
}

// waitReady waits for the CR's Ready condition to be True.
func waitReady(t *testing.T, cr client.Object, conditions func() []metav1.Condition) {
	t.Helper()
	env.Eventually(t, fmt.Sprintf("%T %s Ready", cr, cr.GetName()), func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conditions(), status.TypeReady)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Ready %+v; conditions %+v", c, conditions())
		}
		return nil
	})
}

// assertTakenOver checks that every object upstream left kept its UID and
// is the operator's now, but those left (left says which).
func assertTakenOver(t *testing.T, objs []client.Object, before map[string]types.UID, left func(client.Object) bool) {
	t.Helper()
	for _, o := range objs {
		key := fmt.Sprintf("%T %s", o, o.GetName())
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		assert.Equal(t, before[key], o.GetUID(), "%s kept (same UID)", key)
		if left != nil && left(o) {
			assert.NotContains(t, o.GetLabels(), release.LabelManaged, "%s, of a name this operator does not render, is left", key)
			continue
		}
		assert.Equal(t, "true", o.GetLabels()[release.LabelManaged], "%s is the operator's now", key)
	}
}

// assertRollouts checks the Deployment rolled out at most once, as predicted.
func assertRollouts(t *testing.T, dep *appsv1.Deployment, predicted int) {
	t.Helper()
	must.NoError(t, k8s.Get(context.Background(), client.ObjectKeyFromObject(dep), dep))
	rollouts := replicaSetsOf(t, dep) - 1
	t.Logf("rollouts of the taken-over Deployment: %d (the preflight said %d)", rollouts, predicted)
	assert.LessOrEqual(t, rollouts, 1, "at most one rollout")
	assert.Equal(t, predicted, rollouts, "the preflight predicted the rollouts")
}

// bindings says whether an object is an RBAC binding (left by the switch:
// this operator binds under names of its own).
func bindings(o client.Object) bool {
	switch o.(type) {
	case *rbacv1.ClusterRoleBinding, *rbacv1.RoleBinding:
		return true
	}
	return false
}
