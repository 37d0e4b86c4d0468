// Package proxybinding writes the one ClusterRoleBinding a CR's
// kube-rbac-proxy needs (token and access reviews are cluster-scoped, so
// only a ClusterRoleBinding grants them): created when missing, replaced
// when it differs (the operator never updates a ClusterRoleBinding, which an
// admission policy checks too), deleted with the CR, and never another's.
// A cluster-scoped object cannot carry an owner reference to a namespaced
// CR, so labels say whose a binding is.
package proxybinding

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Binding is the binding one CR needs.
type Binding struct {
	// Want is the binding as it must be.
	Want *rbacv1.ClusterRoleBinding
	// Ours says whether an existing binding of Want's name is the
	// operator's for this CR (of any UID: a re-created CR adopts it).
	Ours func(*rbacv1.ClusterRoleBinding) bool
	// Kind of the CR and RoleManifest (the config/rbac file of the role),
	// for messages.
	Kind, RoleManifest string
}

// Read returns the CR's binding, nil when there is none, before anything is
// applied: a binding of its name that is not the operator's is a
// *status.Failure NameConflict. Read-only.
func Read(ctx context.Context, r client.Reader, b Binding) (*rbacv1.ClusterRoleBinding, error) {
	have := &rbacv1.ClusterRoleBinding{}
	err := r.Get(ctx, client.ObjectKey{Name: b.Want.Name}, have)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read ClusterRoleBinding %s: %w", b.Want.Name, err)
	case !b.Ours(have):
		return nil, &status.Failure{Reason: status.ReasonNameConflict, Message: fmt.Sprintf("ClusterRoleBinding %s exists and was not created by the operator for this resource; the operator neither overwrites nor deletes it: delete it, or rename the %s", b.Want.Name, b.Kind)}
	}
	return have, nil
}

// Ensure creates the binding, or replaces the operator's own (have, as Read
// found it) when it differs.
func Ensure(ctx context.Context, c client.Client, b Binding, have *rbacv1.ClusterRoleBinding) error {
	want := b.Want.DeepCopy()
	if have != nil {
		if have.RoleRef == want.RoleRef && equality.Semantic.DeepEqual(have.Subjects, want.Subjects) && equality.Semantic.DeepEqual(have.Labels, want.Labels) {
			return nil
		}
		if err := c.Delete(ctx, have, client.Preconditions{UID: &have.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replace ClusterRoleBinding %s: %w", want.Name, err)
		}
	}
	switch err := c.Create(ctx, want); {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		// The API server's escalation check answers NotFound when the
		// role is missing, Forbidden when the operator lacks its rules (or
		// the admission policy refuses the binding).
		return &status.Failure{Reason: status.ReasonOperatorForbidden, Message: fmt.Sprintf("create ClusterRoleBinding %s: %v: the API server lets the operator bind ClusterRole %s only when that role exists and the operator holds its permissions; install the operator's manifests, which create it under that name (the OLM bundle, dist/install.yaml, config/default: %s with config/default's name prefix)", want.Name, err, want.RoleRef.Name, b.RoleManifest)}
	case err != nil:
		return fmt.Errorf("create ClusterRoleBinding %s: %w", want.Name, err)
	}
	return nil
}

// Delete removes the operator's binding of the CR, never another's.
func Delete(ctx context.Context, r client.Reader, c client.Client, b Binding) error {
	have := &rbacv1.ClusterRoleBinding{}
	err := r.Get(ctx, client.ObjectKey{Name: b.Want.Name}, have)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read ClusterRoleBinding %s: %w", b.Want.Name, err)
	case !b.Ours(have):
		return nil
	}
	return client.IgnoreNotFound(c.Delete(ctx, have, client.Preconditions{UID: &have.UID}))
}

// Labelled is the binding of role (a ClusterRole) to one ServiceAccount,
// named name and labelled labels; an existing binding of that name is the
// CR's when it carries the same values of the owner keys (not the UID: a
// re-created CR adopts it).
func Labelled(name, role string, sa rbacv1.Subject, labels map[string]string, owner []string, kind, manifest string) Binding {
	return Binding{
		Want: &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{sa},
		},
		Ours: func(b *rbacv1.ClusterRoleBinding) bool {
			for _, k := range owner {
				if b.Labels[k] != labels[k] {
					return false
				}
			}
			return true
		},
		Kind:         kind,
		RoleManifest: manifest,
	}
}
