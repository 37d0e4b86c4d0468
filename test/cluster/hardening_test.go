package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// operatorSA is the operator's ServiceAccount as every install path names it
// (the CSV's Deployment, config/default); the admission policies match it
// by this name in any namespace.
const operatorSA = "ai-stack-operator-controller-manager"

// removePolicies deletes the operator's admission policies and their
// bindings, whoever installed them, and waits until the API server no
// longer enforces them: attack is then allowed (and undone by undo).
func removePolicies(t *testing.T, ctx context.Context, attack func() error, undo func()) {
	t.Helper()
	var policies admissionregistrationv1.ValidatingAdmissionPolicyList
	require(t, k8s.List(ctx, &policies))
	for i := range policies.Items {
		if strings.HasPrefix(policies.Items[i].Name, "ai-stack-operator-") {
			require(t, client.IgnoreNotFound(k8s.Delete(ctx, &policies.Items[i])))
		}
	}
	var bindings admissionregistrationv1.ValidatingAdmissionPolicyBindingList
	require(t, k8s.List(ctx, &bindings))
	for i := range bindings.Items {
		if strings.HasPrefix(bindings.Items[i].Name, "ai-stack-operator-") {
			require(t, client.IgnoreNotFound(k8s.Delete(ctx, &bindings.Items[i])))
		}
	}
	env.Eventually(t, "no policy in force: the operator's ServiceAccount may bind system:auth-delegator to system:authenticated", func() error {
		if err := attack(); err != nil {
			return err
		}
		undo()
		return nil
	})
}

// tokenConfig authenticates as the ServiceAccount ns/name.
func tokenConfig(t *testing.T, ctx context.Context, ns, name string) *rest.Config {
	t.Helper()
	tok, err := kubernetes.NewForConfigOrDie(config).CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require(t, err)
	cfg := rest.AnonymousClientConfig(config)
	cfg.BearerToken = tok.Status.Token
	return cfg
}

// installBundleClusterRoles creates the ClusterRoles the OLM bundle carries,
// as OLM creates them with the CSV: the files of bundle/manifests, unchanged.
func installBundleClusterRoles(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := filepath.Join(framework.Root(), "bundle", "manifests")
	entries, err := os.ReadDir(dir)
	require(t, err)
	var roles []*unstructured.Unstructured
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_clusterrole.yaml") {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require(t, err)
			roles = append(roles, framework.Objects(t, raw)...)
		}
	}
	if len(roles) == 0 {
		t.Fatal("the bundle carries no ClusterRole")
	}
	framework.ApplyAsDocumented(t, k8s, roles, false)
}

// The hardening each documented install path promises is in force: with
// exactly what the path applies, unchanged (the operator's ClusterRole as
// OLM grants it from the bundle plus `kubectl apply -k config/policy`, the
// OLM guide's command; or dist/install.yaml, which make build-installer
// writes and make deploy applies), the operator's ServiceAccount may not
// bind system:auth-delegator to system:authenticated nor the EvalHub roles'
// Secret access cluster-wide to itself, and every other refusal of
// assertRBACRefusals holds. Each path starts without any policy, shown by
// the first attack succeeding. (config/policy once created its policies
// under names its bindings did not name: the bindings were ignored, and a
// test that renamed the objects itself never saw it.)
func TestHardeningOfEachInstallPath(t *testing.T) {
	ctx := context.Background()
	authenticated := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"}
	delegation := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "hardening-grab-delegation"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{authenticated},
	}
	for _, path := range []struct {
		name string
		// install applies the path and returns the operator's
		// ServiceAccount's namespace and its own ClusterRole.
		install func(t *testing.T) (ns, ownRole string)
	}{
		{"OLM bundle, then kubectl apply -k config/policy", func(t *testing.T) (string, string) {
			const ns = "hardening-olm"
			if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			installBundleClusterRoles(t, ctx)
			// AllNamespaces, as config/gitops/operator subscribes: the CSV's
			// clusterPermissions and permissions as ClusterRoles.
			olmRBAC(t, ctx, bundleCSV(t), operatorSA, ns, nil)
			op := opClient(t, ctx, ns)
			removePolicies(t, ctx, func() error { return op.Create(ctx, delegation.DeepCopy()) }, func() { _ = k8s.Delete(ctx, delegation.DeepCopy()) })
			framework.ApplyAsDocumented(t, k8s, framework.Objects(t, framework.Kustomize(t, "config/policy")), false)
			return ns, operatorSA + "-cluster"
		}},
		{"kubectl apply --server-side -f dist/install.yaml", func(t *testing.T) (string, string) {
			const ns = "ai-stack-operator-system"
			b, err := olm.Installer(framework.Root(), "quay.io/ai-stack-operator/ai-stack-operator:v0.1.0")
			require(t, err)
			objs := framework.Objects(t, b)
			var withoutPolicies, policies []*unstructured.Unstructured
			for _, o := range objs {
				if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
					policies = append(policies, o)
				} else {
					withoutPolicies = append(withoutPolicies, o)
				}
			}
			if len(policies) == 0 {
				t.Fatal("dist/install.yaml carries no admission policy")
			}
			// Everything but the policies first, to show the attack open
			// without them; then the whole file, as documented.
			framework.ApplyAsDocumented(t, k8s, withoutPolicies, true)
			op := opClient(t, ctx, ns)
			removePolicies(t, ctx, func() error { return op.Create(ctx, delegation.DeepCopy()) }, func() { _ = k8s.Delete(ctx, delegation.DeepCopy()) })
			framework.ApplyAsDocumented(t, k8s, objs, true)
			return ns, "ai-stack-operator-manager-role"
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			ns, ownRole := path.install(t)
			self := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: operatorSA}
			assertRBACRefusals(t, ctx, opClient(t, ctx, ns), self, ownRole)
		})
	}
}

// opClient is a client that authenticates as the operator's ServiceAccount
// in namespace ns.
func opClient(t *testing.T, ctx context.Context, ns string) client.Client {
	t.Helper()
	c, err := client.New(tokenConfig(t, ctx, ns, operatorSA), client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
