package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// clusterRole reads a ClusterRole of config/rbac.
func clusterRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(raw, role); err != nil {
		t.Fatal(err)
	}
	return role
}

// operatorConfig returns a client configuration that authenticates as a
// ServiceAccount bound to exactly config/rbac/role.yaml (the operator's
// ClusterRole), not as the cluster's administrator.
func operatorConfig(t *testing.T, ctx context.Context) *rest.Config {
	t.Helper()
	role := clusterRole(t, "role.yaml")
	role.Name = "rbac-test-manager-role"
	cs := kubernetes.NewForConfigOrDie(config)
	const ns, sa = "ai-stack-operator-system", "rbac-test-operator"
	for _, create := range []func() error{
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(config)
	cfg.BearerToken = tok.Status.Token
	return cfg
}

// installProxyRole installs the ClusterRole the proxies are bound to, as
// config/default names it.
func installProxyRole(t *testing.T, ctx context.Context) {
	t.Helper()
	proxy := clusterRole(t, "trustyai_proxy_role.yaml")
	proxy.Name = "ai-stack-operator-" + proxy.Name
	if err := k8s.Create(ctx, proxy); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// installEvalHubRoles installs the ClusterRoles EvalHubs' grants bind, as
// config/default names them.
func installEvalHubRoles(t *testing.T, ctx context.Context) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "evalhub_roles.yaml"))
	require(t, err)
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		role := &rbacv1.ClusterRole{}
		require(t, yaml.UnmarshalStrict([]byte(doc), role))
		role.Name = "ai-stack-operator-" + role.Name
		if err := k8s.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// The operator's lifecycle (create, update, Ready with pods, delete) with
// exactly the permissions config/rbac grants: a permission the code needs and
// the ClusterRole lacks fails this test.
func TestLifecycleWithTheOperatorsOwnPermissions(t *testing.T) {
	ctx := context.Background()
	cfg := operatorConfig(t, ctx)
	// The ServiceAccount can do what the role says, and no more.
	sar, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if err == nil || !apierrors.IsForbidden(err) {
		t.Fatalf("the operator's ServiceAccount can list Secrets (%v, %v): the test does not run with its permissions", sar, err)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := framework.RunManager(t, cfg, nil)
	defer stop()

	cr := &llamav1alpha1.LlamaStackDistribution{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rbac"},
		Spec: llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{
			Distribution: llamav1alpha1.DistributionType{Name: "starter"},
			// Every object the chart can render, and a CA bundle written by Go.
			PodDisruptionBudget: &llamav1alpha1.PodDisruptionBudgetSpec{},
			Autoscaling:         &llamav1alpha1.AutoscalingSpec{MaxReplicas: 2},
			Config:              &llamav1alpha1.ServerConfig{Providers: &llamav1alpha1.Providers{Inference: []llamav1alpha1.Provider{{ProviderID: "p", ProviderType: "remote::vllm"}}}},
		}, Network: &llamav1alpha1.NetworkSpec{ExposeRoute: true}},
	}
	if err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "odh-trusted-ca-bundle"}, Data: map[string]string{"odh-ca-bundle.crt": "\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 1)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "rbac-ca-bundle"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the CA bundle: %v", err)
	}

	env.Update(t, cr, func() { cr.Spec.Server.Distribution = llamav1alpha1.DistributionType{Name: "remote-vllm"} })
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 2)

	if err := k8s.Delete(ctx, cr); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the CR deleted", env.GoneFrom(&llamav1alpha1.LlamaStackDistribution{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rbac"}}))

	// A TrustyAIService in DATABASE mode: the metadata get of <name>-db-ca,
	// the pods' states, and the proxy's ClusterRoleBinding to the shipped
	// ClusterRole (config/default's name prefix applied), which the operator
	// may create only because it holds the role's permissions itself.
	installProxyRole(t, ctx)
	tas := framework.TASDatabase(ns.Name, "rbac-tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.WaitTASReady(t, tas)
	binding := &rbacv1.ClusterRoleBinding{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trustyai-proxy." + ns.Name + ".rbac-tas"}, binding); err != nil {
		t.Fatalf("the proxy's binding: %v", err)
	}
	if err := k8s.Delete(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the TrustyAIService deleted", env.GoneFrom(&trustyv1.TrustyAIService{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rbac-tas"}}))
	env.Eventually(t, "the binding deleted", env.GoneFrom(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name}}))

	// An EvalHub with its MCP server: the chart's objects, the proxy's
	// ClusterRoleBinding, and its grants (RoleBindings of the shipped roles,
	// which the operator may create through bind on exactly those, and the
	// jobs' ServiceAccount), listed by their labels to be deleted with it.
	installEvalHubRoles(t, ctx)
	hub := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rbac-hub"}, Spec: evalhubv1.EvalHubSpec{
		Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, MCP: &evalhubv1.EvalHubMCPSpec{Enabled: ptrTo(true)},
	}}
	if err := k8s.Create(ctx, hub); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the EvalHub Ready", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(hub), hub); err != nil {
			return err
		}
		for _, typ := range []string{"Ready", "TenantsReady"} {
			if c := meta.FindStatusCondition(hub.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != hub.Generation {
				return fmt.Errorf("%s: %+v", typ, hub.Status.Conditions)
			}
		}
		return nil
	})
	hubBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "evalhub-proxy." + ns.Name + ".rbac-hub"}}
	require(t, k8s.Get(ctx, client.ObjectKeyFromObject(hubBinding), hubBinding))
	writer := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "evalhub." + ns.Name + ".rbac-hub.job-writer"}}
	require(t, k8s.Get(ctx, client.ObjectKeyFromObject(writer), writer))
	if err := k8s.Delete(ctx, hub); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the EvalHub deleted", env.GoneFrom(&evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "rbac-hub"}}))
	env.Eventually(t, "its proxy binding deleted", env.GoneFrom(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: hubBinding.Name}}))
	env.Eventually(t, "its grants deleted", env.GoneFrom(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: writer.Name}}))
}

func ptrTo[T any](v T) *T { return &v }

// ModelMesh's Deployments are wired with exactly the operator's permissions,
// through the labelled watch alone (the reconcile period is ten minutes):
// one made after the service is Ready gets the payload processor within
// seconds and rolls out with it; the service's deletion gives it back.
func TestModelMeshWiringWithTheOperatorsOwnPermissions(t *testing.T) {
	ctx := context.Background()
	cfg := operatorConfig(t, ctx)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-modelmesh"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	installProxyRole(t, ctx)
	stop := framework.RunManager(t, cfg, nil)
	defer stop()
	tas := framework.TASDatabase(ns.Name, "tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the TrustyAIService finds no model server", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tas), tas); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(tas.Status.Conditions, "InferenceServicesPresent"); c == nil || c.Reason != "InferenceServiceAPINotFound" {
			return fmt.Errorf("conditions %+v", tas.Status.Conditions)
		}
		return nil
	})

	mm := framework.ModelMeshDeployment(ns.Name, "modelmesh-serving-ovms")
	labels := mm.Labels
	start := time.Now()
	if err := k8s.Create(ctx, mm); err != nil {
		t.Fatal(err)
	}
	want := "http://tas." + ns.Name + ".svc/consumer/kserve/v2"
	env.Eventually(t, "the ModelMesh pods run with the payload processor", func() error {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns.Name), client.MatchingLabels(labels)); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && envOf(p.Spec.Containers, "mm", "MM_PAYLOAD_PROCESSORS") == want {
				return nil
			}
		}
		return fmt.Errorf("%d pods, none running with %s", len(pods.Items), want)
	})
	t.Logf("a ModelMesh Deployment made later runs with the processor after %s", time.Since(start).Round(time.Millisecond))

	if err := k8s.Delete(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the TrustyAIService deleted", env.GoneFrom(&trustyv1.TrustyAIService{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "tas"}}))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(mm), mm); err != nil {
		t.Fatal(err)
	}
	if v := envOf(mm.Spec.Template.Spec.Containers, "mm", "MM_PAYLOAD_PROCESSORS"); v != "" {
		t.Errorf("MM_PAYLOAD_PROCESSORS %q stays after the service's deletion", v)
	}
}

// envOf is the value of a container's environment variable.
func envOf(cs []corev1.Container, container, name string) string {
	for _, c := range cs {
		for _, e := range c.Env {
			if c.Name == container && e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// Without the ClusterRole the proxies are bound to, the API server refuses
// the operator the binding: the CR says so (OperatorForbidden, naming the
// manifest to install) instead of retrying in silence, and recovers once the
// administrator installs it.
func TestMissingProxyRoleIsReported(t *testing.T) {
	ctx := context.Background()
	cfg := operatorConfig(t, ctx)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ai-stack-operator-trustyai-proxy"}}
	if err := k8s.Delete(ctx, role); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	defer installProxyRole(t, ctx)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-no-proxy-role"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := framework.RunManager(t, cfg, nil)
	defer stop()
	tas := framework.TASDatabase(ns.Name, "tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	provisioned := func(st metav1.ConditionStatus, reason string) func() error {
		return func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(tas), tas); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(tas.Status.Conditions, "ProvisioningSucceeded"); c == nil || c.Status != st || c.Reason != reason {
				return fmt.Errorf("conditions %+v", tas.Status.Conditions)
			}
			return nil
		}
	}
	env.Eventually(t, "ProvisioningSucceeded=False OperatorForbidden", provisioned(metav1.ConditionFalse, "OperatorForbidden"))
	msg := meta.FindStatusCondition(tas.Status.Conditions, "ProvisioningSucceeded").Message
	if !strings.Contains(msg, "config/rbac/trustyai_proxy_role.yaml") {
		t.Errorf("the message does not name the manifest to install: %s", msg)
	}
	installProxyRole(t, ctx)
	env.Eventually(t, "ProvisioningSucceeded=True once the role exists", provisioned(metav1.ConditionTrue, "ReleaseApplied"))
	if err := k8s.Delete(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, "the TrustyAIService deleted", env.GoneFrom(&trustyv1.TrustyAIService{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "tas"}}))
}

// assertRBACRefusals checks, as the operator's ServiceAccount (op) whose
// own ClusterRole is ownRole, with the admission policies of config/policy
// in force, that a compromised operator cannot turn its ClusterRole into
// power over the cluster's RBAC: it may neither bind its own role or
// system:auth-delegator to anyone, nor bind the EvalHub roles cluster-wide,
// nor delete or update another's binding, nor read a Secret; it may create
// and delete the bindings its kinds need. (RBAC alone lets it: the API
// server's escalation check passes for roles whose permissions it holds,
// and RBAC cannot limit create to names.) TestHardeningOfEachInstallPath
// runs it for each documented way to install the operator.
func assertRBACRefusals(t *testing.T, ctx context.Context, op client.Client, self rbacv1.Subject, ownRole string) {
	t.Helper()
	binding := func(name, role string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		}
	}
	anyone := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:unauthenticated"}
	someSA := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "someone"}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: allowed", what)
		} else if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v", what, err)
		}
	}
	// The policy takes a moment to load: a legitimate binding passes it
	// throughout, and the first refusal says it is in force.
	env.Eventually(t, "the policy refuses a binding of system:auth-delegator", func() error {
		err := op.Create(ctx, binding("grab-reviews", "system:auth-delegator", someSA))
		if err == nil {
			_ = k8s.Delete(ctx, binding("grab-reviews", "system:auth-delegator", someSA))
			return fmt.Errorf("allowed")
		}
		return nil
	})
	refused("bind its own ClusterRole to system:unauthenticated", op.Create(ctx, binding("grab-all", ownRole, anyone)))
	// The second security review's reproductions, with the policies applied
	// as documented: token and access reviews for every authenticated user,
	// and the EvalHub roles' Secret access cluster-wide for itself.
	authenticated := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"}
	refused("bind system:auth-delegator to system:authenticated", op.Create(ctx, binding("grab-delegation", "system:auth-delegator", authenticated)))
	refused("bind ai-stack-operator-evalhub-model-secret cluster-wide to itself", op.Create(ctx, binding("grab-secrets", "ai-stack-operator-evalhub-model-secret", self)))
	refused("bind the proxy role to another subject", op.Create(ctx, binding("trustyai-proxy.default.x", "ai-stack-operator-trustyai-proxy", someSA)))

	theirs := binding("someone-elses", "view", someSA)
	if err := k8s.Create(ctx, theirs); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, theirs) })
	refused("delete another's ClusterRoleBinding", op.Delete(ctx, theirs.DeepCopy()))
	stolen := theirs.DeepCopy()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(stolen), stolen); err != nil {
		t.Fatal(err)
	}
	stolen.Subjects = []rbacv1.Subject{anyone}
	refused("update another's ClusterRoleBinding", op.Update(ctx, stolen))
	refused("read a Secret", op.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "anything"}, &corev1.Secret{}))

	own := binding("trustyai-proxy.default.tas", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "tas-proxy"})
	if err := op.Create(ctx, own); err != nil {
		t.Fatalf("the proxy binding the operator needs: %v", err)
	}
	if err := op.Delete(ctx, own); err != nil {
		t.Fatalf("deleting its own proxy binding: %v", err)
	}
	// NemoGuardrails' form: nemoguardrails-proxy.<namespace>.<name> for
	// <name>-serviceaccount, and neither form with the other's subject.
	refused("a NemoGuardrails binding of another name", op.Create(ctx, binding("nemoguardrails-proxy.default.x", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "y-serviceaccount"})))
	refused("the TrustyAI form for a NemoGuardrails ServiceAccount", op.Create(ctx, binding("trustyai-proxy.default.nemo", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "nemo-serviceaccount"})))
	nemo := binding("nemoguardrails-proxy.default.nemo", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "nemo-serviceaccount"})
	if err := op.Create(ctx, nemo); err != nil {
		t.Fatalf("the NemoGuardrails proxy binding the operator needs: %v", err)
	}
	if err := op.Delete(ctx, nemo); err != nil {
		t.Fatalf("deleting its own NemoGuardrails proxy binding: %v", err)
	}
	// EvalHub's form: evalhub-proxy.<namespace>.<name> for <name>-service.
	refused("an EvalHub binding of another name", op.Create(ctx, binding("evalhub-proxy.default.x", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "y-service"})))
	hubCRB := binding("evalhub-proxy.default.hub", "ai-stack-operator-trustyai-proxy", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "hub-service"})
	if err := op.Create(ctx, hubCRB); err != nil {
		t.Fatalf("the EvalHub proxy binding the operator needs: %v", err)
	}
	if err := op.Delete(ctx, hubCRB); err != nil {
		t.Fatalf("deleting its own EvalHub proxy binding: %v", err)
	}

	// RoleBindings: only upstream's anyuid binding <name>-rb of <name>-sa
	// (the anyuid-role-binding setting), through bind on that one role.
	anyuid := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:openshift:scc:anyuid"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"}, ResourceNames: []string{"anyuid"}, Verbs: []string{"use"}}}}
	if err := k8s.Create(ctx, anyuid); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	roleBinding := func(name, role, sa string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: sa}},
		}
	}
	env.Eventually(t, "the policy refuses a RoleBinding of the operator's own role", func() error {
		rb := roleBinding("llama-rb", ownRole, "llama-sa")
		if err := op.Create(ctx, rb); err == nil {
			_ = k8s.Delete(ctx, rb)
			return fmt.Errorf("allowed")
		}
		return nil
	})
	refused("bind anyuid to another ServiceAccount", op.Create(ctx, roleBinding("llama-rb", "system:openshift:scc:anyuid", "default")))
	refused("bind anyuid under another name", op.Create(ctx, roleBinding("grab", "system:openshift:scc:anyuid", "grab-sa")))
	refused("bind admin to <name>-sa", op.Create(ctx, roleBinding("llama-rb", "admin", "llama-sa")))
	theirRB := roleBinding("someone-rb", "view", "someone-sa")
	if err := k8s.Create(ctx, theirRB); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, theirRB) })
	refused("delete another's RoleBinding", op.Delete(ctx, theirRB.DeepCopy()))
	ownRB := roleBinding("llama-rb", "system:openshift:scc:anyuid", "llama-sa")
	if err := op.Create(ctx, ownRB); err != nil {
		t.Fatalf("the anyuid binding the setting renders: %v", err)
	}
	hijack := ownRB.DeepCopy()
	hijack.Subjects[0].Name = "default"
	refused("point its anyuid binding at another ServiceAccount", op.Update(ctx, hijack))
	if err := op.Delete(ctx, ownRB); err != nil {
		t.Fatalf("deleting its own anyuid binding: %v", err)
	}

	// An EvalHub's grants: RoleBindings of the shipped roles, labelled with
	// the EvalHub, for its server's ServiceAccount of the EvalHub's
	// namespace, or (job roles only) its jobs' of the binding's namespace.
	installEvalHubRoles(t, ctx)
	grant := func(name, role string, subject rbacv1.Subject, owner string) *rbacv1.RoleBinding {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		}
		if owner != "" {
			rb.Labels = map[string]string{"ai-stack-operator.io/owner-kind": "EvalHub", "ai-stack-operator.io/owner-namespace": owner}
		}
		return rb
	}
	server := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "hubs", Name: "hub-service"}
	jobs := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "hub-hubs-job"}
	refused("an EvalHub role without the EvalHub's labels", op.Create(ctx, grant("hub-hubs-job-writer-rb", "ai-stack-operator-evalhub-jobs-writer", server, "")))
	refused("an EvalHub role for another namespace's server", op.Create(ctx, grant("hub-hubs-job-writer-rb", "ai-stack-operator-evalhub-jobs-writer", server, "elsewhere")))
	refused("a server role for a ServiceAccount that is no server's", op.Create(ctx, grant("hub-hubs-model-secret-rb", "ai-stack-operator-evalhub-model-secret", jobs, "hubs")))
	refused("a job role for another namespace's ServiceAccount", op.Create(ctx, grant("hub-hubs-job-access-rb", "ai-stack-operator-evalhub-job-access", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "x"}, "hubs")))
	refused("an EvalHub user role (not a grant's)", op.Create(ctx, grant("hub-hubs-user-rb", "ai-stack-operator-evalhub-tenant-admin", server, "hubs")))
	for _, rb := range []*rbacv1.RoleBinding{
		grant("hub-hubs-model-secret-rb", "ai-stack-operator-evalhub-model-secret", server, "hubs"),
		grant("hub-hubs-job-access-rb", "ai-stack-operator-evalhub-job-access", jobs, "hubs"),
	} {
		if err := op.Create(ctx, rb); err != nil {
			t.Fatalf("the EvalHub grant %s: %v", rb.Name, err)
		}
		hijacked := rb.DeepCopy()
		require(t, k8s.Get(ctx, client.ObjectKeyFromObject(hijacked), hijacked))
		hijacked.Subjects[0] = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "default"}
		refused("point an EvalHub grant at another ServiceAccount", op.Update(ctx, hijacked))
		if err := op.Delete(ctx, rb); err != nil {
			t.Fatalf("deleting the EvalHub grant %s: %v", rb.Name, err)
		}
	}

	// Roles and their bindings: only an LMEvalJob driver's, as the chart
	// renders them (get and patch of one job's status, bound to the
	// ServiceAccount of the same name).
	role, rb := driverRBAC(t, "default", "evaljob")
	env.Eventually(t, "the policy refuses a Role beyond a driver's", func() error {
		grab := role.DeepCopy()
		grab.Rules = append(grab.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}})
		if err := op.Create(ctx, grab); err == nil {
			_ = k8s.Delete(ctx, grab)
			return fmt.Errorf("allowed")
		}
		return nil
	})
	renamed := role.DeepCopy()
	renamed.Name = "grab"
	refused("a driver's Role under another name", op.Create(ctx, renamed))
	every := role.DeepCopy()
	every.Rules[0].ResourceNames = nil
	refused("a driver's Role over every job", op.Create(ctx, every))
	create := role.DeepCopy()
	create.Rules[0].Verbs = append(create.Rules[0].Verbs, "update")
	refused("a driver's Role with another verb", op.Create(ctx, create))
	if err := op.Create(ctx, role); err != nil {
		t.Fatalf("the driver's Role the chart renders: %v", err)
	}
	other := rb.DeepCopy()
	other.Subjects[0].Name = "default"
	refused("bind a driver's Role to another ServiceAccount", op.Create(ctx, other))
	manager := rb.DeepCopy()
	manager.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ownRole}
	refused("bind its own ClusterRole under a driver's name", op.Create(ctx, manager))
	if err := op.Create(ctx, rb); err != nil {
		t.Fatalf("the driver's RoleBinding the chart renders: %v", err)
	}
	hijackRB := rb.DeepCopy()
	require(t, k8s.Get(ctx, client.ObjectKeyFromObject(hijackRB), hijackRB))
	hijackRB.Subjects[0].Name = "default"
	refused("point a driver's binding at another ServiceAccount", op.Update(ctx, hijackRB))
	// Garbage collection deletes them with the job (the operator has no
	// delete of Roles).
	for _, o := range []client.Object{rb, role} {
		if err := k8s.Delete(ctx, o); err != nil {
			t.Fatalf("deleting a driver's %T: %v", o, err)
		}
	}
}

// driverRBAC is the Role and RoleBinding the lmeval-job chart renders for
// a job.
func driverRBAC(t *testing.T, ns, name string) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	job := framework.LMEvalJob(ns, name)
	s, err := lmeval.ParseSettings(nil, nil, nil, nil, "quay.io/ai-stack-operator/ai-stack-operator:test")
	require(t, err)
	vals, err := lmeval.Values(job, s, lmeval.PermitsFor(&job.Spec, s), map[string]string{"ai-stack-operator.io/managed": "true"}, "", nil)
	require(t, err)
	c, err := charts.Load(lmeval.Chart)
	require(t, err)
	out, err := render.Render(c.Chart, vals, render.Options{ReleaseName: name, Namespace: ns})
	require(t, err)
	role, rb := &rbacv1.Role{}, &rbacv1.RoleBinding{}
	for _, doc := range strings.Split(out, "\n---") {
		switch {
		case strings.Contains(doc, "\nkind: Role\n"):
			require(t, yaml.Unmarshal([]byte(doc), role))
		case strings.Contains(doc, "\nkind: RoleBinding\n"):
			require(t, yaml.Unmarshal([]byte(doc), rb))
		}
	}
	if role.Name == "" || rb.Name == "" {
		t.Fatalf("the chart rendered no driver Role or RoleBinding:\n%s", out)
	}
	role.Namespace, rb.Namespace = ns, ns
	return role, rb
}

func require(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Namespace users manage the CRs through the cluster's aggregated roles:
// with config/rbac's editor and viewer roles installed, a user bound only to
// the built-in edit role in a namespace creates, updates and deletes each
// kind there, and one bound only to view reads them and may not create
// them. (Without the aggregated roles, which upstream ships, a namespace
// admin could not create these CRs until a cluster admin wrote roles.)
func TestNamespaceUsersManageTheCRs(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"llamastackdistribution_editor_role.yaml", "llamastackdistribution_viewer_role.yaml", "trustyaiservice_editor_role.yaml", "trustyaiservice_viewer_role.yaml", "lmevaljob_editor_role.yaml", "lmevaljob_viewer_role.yaml"} {
		role := clusterRole(t, file)
		role.Name = "ai-stack-operator-" + role.Name
		if err := k8s.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-namespace-users"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	as := func(user, role string) client.Client {
		if err := k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	editor, viewer := as("alice", "edit"), as("bob", "view")
	crs := []client.Object{framework.LLSD(ns.Name, "by-alice"), framework.TASDatabase(ns.Name, "by-alice"), framework.LMEvalJob(ns.Name, "by-alice")}
	for _, cr := range crs {
		// The aggregation controller adds the rules to edit within moments.
		env.Eventually(t, fmt.Sprintf("%T created by a namespace editor", cr), func() error {
			return editor.Create(ctx, cr.DeepCopyObject().(client.Object))
		})
		list := &metav1.PartialObjectMetadataList{}
		gvk, err := apiutil.GVKForObject(cr, k8s.Scheme())
		if err != nil {
			t.Fatal(err)
		}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		env.Eventually(t, fmt.Sprintf("%T listed by a namespace viewer", cr), func() error {
			return viewer.List(ctx, list, client.InNamespace(ns.Name))
		})
		other := cr.DeepCopyObject().(client.Object)
		other.SetName("by-bob")
		if err := viewer.Create(ctx, other); !apierrors.IsForbidden(err) {
			t.Errorf("%T created by a namespace viewer: %v", cr, err)
		}
		if err := editor.Delete(ctx, cr.DeepCopyObject().(client.Object)); err != nil {
			t.Errorf("%T deleted by a namespace editor: %v", cr, err)
		}
	}
}
