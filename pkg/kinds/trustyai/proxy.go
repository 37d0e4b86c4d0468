package trustyai

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// ProxyClusterRole is the ClusterRole (config/rbac) that lets kube-rbac-proxy
// review tokens and access: cluster-scoped APIs, so only a ClusterRoleBinding
// grants them. The operator holds the same permissions, so it may bind it.
const ProxyClusterRole = "ai-stack-operator-trustyai-proxy"

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
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ProxyClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: cr.Namespace, Name: serviceAccountName(cr.Name)}},
	}
}

// isOurs says whether a binding is the operator's for this CR (of any UID:
// a re-created CR of the same name adopts it).
func isOurs(b *rbacv1.ClusterRoleBinding, cr *trustyv1.TrustyAIService) bool {
	return b.Labels[release.LabelManaged] == "true" && b.Labels[labelOwnerNamespace] == cr.Namespace && b.Labels[labelOwnerName] == cr.Name
}

// readProxyBinding reads the CR's binding (nil when there is none) before
// anything is applied: a binding of its name that is not the operator's is
// a NameConflict, and nothing of the CR is applied. Read-only.
func (k *Kind) readProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService) (*rbacv1.ClusterRoleBinding, error) {
	name := proxyBindingName(cr.Name, cr.Namespace)
	have := &rbacv1.ClusterRoleBinding{}
	err := k.APIReader.Get(ctx, client.ObjectKey{Name: name}, have)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read ClusterRoleBinding %s: %w", name, err)
	case !isOurs(have, cr):
		return nil, &status.Failure{Reason: status.ReasonNameConflict, Message: fmt.Sprintf("ClusterRoleBinding %s exists and was not created by the operator for this resource; the operator neither overwrites nor deletes it: delete it, or rename the TrustyAIService", name)}
	}
	return have, nil
}

// ensureProxyBinding creates the binding, or replaces the operator's own
// (have, as readProxyBinding found it) when it differs. The operator may not
// update ClusterRoleBindings (a compromised operator could otherwise point
// anyone's binding at any role it holds); it creates and deletes only its
// own, which an admission policy checks too (docs/security.md).
func (k *Kind) ensureProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService, have *rbacv1.ClusterRoleBinding) error {
	want := proxyBinding(cr)
	if have != nil {
		if have.RoleRef == want.RoleRef && equality.Semantic.DeepEqual(have.Subjects, want.Subjects) && equality.Semantic.DeepEqual(have.Labels, want.Labels) {
			return nil
		}
		if err := k.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replace ClusterRoleBinding %s: %w", want.Name, err)
		}
	}
	switch err := k.Client.Create(ctx, want); {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		// The API server's escalation check answers NotFound when the
		// role is missing, Forbidden when the operator lacks its rules (or
		// the admission policy refuses the binding).
		return &status.Failure{Reason: status.ReasonOperatorForbidden, Message: fmt.Sprintf("create ClusterRoleBinding %s: %v: the API server lets the operator bind ClusterRole %s only when that role exists and the operator holds its permissions; install the operator's manifests (config/rbac/trustyai_proxy_role.yaml)", want.Name, err, ProxyClusterRole)}
	case err != nil:
		return fmt.Errorf("create ClusterRoleBinding %s: %w", want.Name, err)
	}
	return nil
}

// deleteProxyBinding removes the operator's binding of the CR, never another's.
func (k *Kind) deleteProxyBinding(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	have := &rbacv1.ClusterRoleBinding{}
	err := k.APIReader.Get(ctx, client.ObjectKey{Name: proxyBindingName(cr.Name, cr.Namespace)}, have)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read ClusterRoleBinding %s: %w", have.Name, err)
	case !isOurs(have, cr):
		return nil
	}
	return client.IgnoreNotFound(k.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID}))
}
