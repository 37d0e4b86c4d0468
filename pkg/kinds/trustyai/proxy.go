package trustyai

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/proxybinding"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trustyaifamily"
)

// Labels of the proxy binding: whose it is (a cluster-scoped object cannot
// carry an owner reference to a namespaced CR; the garbage collector would
// delete it).
const (
	labelOwnerNamespace = "trustyai.opendatahub.io/owner-namespace"
	labelOwnerName      = "trustyai.opendatahub.io/owner-name"
)

// proxyBinding is the ClusterRoleBinding the CR's proxy needs.
func proxyBinding(cr *trustyv1.TrustyAIService) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name: proxyBindingName(cr.Name, cr.Namespace),
			// The release sweep deletes a binding whose CR is gone (its
			// finalizer removed by hand) by the kind, namespace and UID.
			Labels: map[string]string{
				release.LabelManaged:        "true",
				labelOwnerNamespace:         cr.Namespace,
				labelOwnerName:              cr.Name,
				release.LabelOwnerKind:      trustyv1.Kind,
				release.LabelOwnerNamespace: cr.Namespace,
				release.LabelOwnerUID:       string(cr.UID),
			},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: trustyaifamily.ProxyClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: cr.Namespace, Name: serviceAccountName(cr.Name)}},
	}
}

// isOurs says whether a binding is the operator's for this CR (of any UID:
// a re-created CR of the same name adopts it).
func isOurs(b *rbacv1.ClusterRoleBinding, cr *trustyv1.TrustyAIService) bool {
	return b.Labels[release.LabelManaged] == "true" && b.Labels[labelOwnerNamespace] == cr.Namespace && b.Labels[labelOwnerName] == cr.Name
}

// binding is the CR's binding for pkg/proxybinding.
func binding(cr *trustyv1.TrustyAIService) proxybinding.Binding {
	return proxybinding.Binding{
		Want:         proxyBinding(cr),
		Ours:         func(b *rbacv1.ClusterRoleBinding) bool { return isOurs(b, cr) },
		Kind:         trustyv1.Kind,
		RoleManifest: "config/rbac/trustyai_proxy_role.yaml",
	}
}

// readProxyBinding reads the CR's binding (nil when there is none) before
// anything is applied: a binding of its name that is not the operator's is
// a NameConflict, and nothing of the CR is applied. Read-only.
func (k *Kind) readProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService) (*rbacv1.ClusterRoleBinding, error) {
	return proxybinding.Read(ctx, k.APIReader, binding(cr))
}

// ensureProxyBinding creates the binding, or replaces the operator's own
// (have, as readProxyBinding found it) when it differs. The operator may not
// update ClusterRoleBindings (a compromised operator could otherwise point
// anyone's binding at any role it holds); it creates and deletes only its
// own, which an admission policy checks too (docs/security.md).
func (k *Kind) ensureProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService, have *rbacv1.ClusterRoleBinding) error {
	return proxybinding.Ensure(ctx, k.Client, binding(cr), have)
}

// deleteProxyBinding removes the operator's binding of the CR, never another's.
func (k *Kind) deleteProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	return proxybinding.Delete(ctx, k.APIReader, k.Client, binding(cr))
}
