package evalhub

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// What the grants need, generated into config/rbac/role.yaml by `make
// manifests`: the Namespaces (their tenant label), RoleBindings listed by
// their labels across namespaces, and bind on exactly the shipped
// ClusterRoles (the admission policy config/policy/anyuid_bindings.yaml
// admits the operator's RoleBindings of these roles only).
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=ai-stack-operator-evalhub-jobs-writer;ai-stack-operator-evalhub-job-config;ai-stack-operator-evalhub-hardware-profiles-reader;ai-stack-operator-evalhub-events;ai-stack-operator-evalhub-mlflow-access;ai-stack-operator-evalhub-mlflow-jobs-access;ai-stack-operator-evalhub-model-secret;ai-stack-operator-evalhub-providers-access;ai-stack-operator-evalhub-collections-access;ai-stack-operator-evalhub-pod-logs;ai-stack-operator-evalhub-job-access;ai-stack-operator-evalhub-proxy-access

// GrantResult is what Finish did with the grants, for Status.
type GrantResult struct {
	// Tenants are the namespaces served besides the hub's.
	Tenants []string
	// Problems are the objects that could not be written (a name taken by
	// another's object, a namespace that does not exist).
	Problems []string
}

// readTenancy reads what decides the CR's tenants: the namespaces labelled
// LabelTenant (only for a multi-tenant hub in a hub namespace) and, for
// upstream's placement rule, the CR's own namespace's label.
func (k *Kind) readTenancy(ctx context.Context, cr *evalhubv1.EvalHub, s Settings) ([]string, error) {
	if k.APIReader == nil || cr.Spec.Tenancy == evalhubv1.TenancySingle {
		return nil, nil
	}
	own := &metav1.PartialObjectMetadata{}
	own.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := k.APIReader.Get(ctx, client.ObjectKey{Name: cr.Namespace}, own); err != nil {
		return nil, fmt.Errorf("read Namespace %s: %w", cr.Namespace, err)
	}
	if _, ok := own.Labels[LabelTenant]; ok {
		return nil, &status.Failure{Reason: "InvalidPlacement", Field: "spec.tenancy", Message: fmt.Sprintf("a multi-tenant EvalHub cannot run in a tenant namespace (Namespace %s is labelled %s): remove the label or set spec.tenancy: single", cr.Namespace, LabelTenant)}
	}
	in := tenancyInputs{HubNamespaces: s.HubNamespaces, TenantNamespaces: s.TenantNamespaces, Labelled: map[string]string{}}
	if len(s.HubNamespaces) > 0 {
		req, err := labels.NewRequirement(LabelTenant, selection.Exists, nil)
		if err != nil {
			return nil, err
		}
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
		if err := k.APIReader.List(ctx, &list, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
			return nil, fmt.Errorf("list the Namespaces labelled %s: %w", LabelTenant, err)
		}
		for _, ns := range list.Items {
			if ns.DeletionTimestamp == nil {
				in.Labelled[ns.Name] = ns.Labels[LabelTenant]
			}
		}
	}
	return Tenants(cr, in), nil
}

// grantSelector selects the objects of the CR's grants in every namespace:
// only those with the operator's label too, so that a copy of a grant
// without it (someone else's object with the grant's other labels) is
// never updated or deleted.
func grantSelector(cr *evalhubv1.EvalHub) client.MatchingLabels {
	return client.MatchingLabels{release.LabelManaged: "true", LabelGrant: "true", release.LabelOwnerKind: evalhubv1.Kind, release.LabelOwnerNamespace: cr.Namespace, labelOwnerName: naming.NameLabel(cr.Name)}
}

// existingGrants lists the objects of the CR's grants, by kind/namespace/name:
// across the cluster, or, where the operator may not list there (installed
// for some namespaces only), in the CR's namespace and the tenants it has
// now or had at its last status.
func (k *Kind) existingGrants(ctx context.Context, cr *evalhubv1.EvalHub, tenants []string) (map[string]client.Object, error) {
	out := map[string]client.Object{}
	namespaces := []string{""}
	for i := 0; i < len(namespaces); i++ {
		ns := namespaces[i]
		var sas corev1.ServiceAccountList
		var rbs rbacv1.RoleBindingList
		var cms corev1.ConfigMapList
		for _, l := range []client.ObjectList{&sas, &rbs, &cms} {
			err := k.APIReader.List(ctx, l, grantSelector(cr), client.InNamespace(ns))
			if ns == "" && apierrors.IsForbidden(err) {
				seen := map[string]bool{}
				for _, n := range append(append([]string{cr.Namespace}, tenants...), cr.Status.TenantNamespaces...) {
					if !seen[n] {
						seen[n] = true
						namespaces = append(namespaces, n)
					}
				}
				break
			}
			if err != nil {
				return nil, fmt.Errorf("list the objects of EvalHub %s/%s's grants: %w", cr.Namespace, cr.Name, err)
			}
		}
		for i := range sas.Items {
			out[key(&sas.Items[i])] = &sas.Items[i]
		}
		for i := range rbs.Items {
			out[key(&rbs.Items[i])] = &rbs.Items[i]
		}
		for i := range cms.Items {
			out[key(&cms.Items[i])] = &cms.Items[i]
		}
	}
	return out, nil
}

func kindOf(o client.Object) string {
	switch o.(type) {
	case *corev1.ServiceAccount:
		return "ServiceAccount"
	case *rbacv1.RoleBinding:
		return "RoleBinding"
	case *corev1.ConfigMap:
		return "ConfigMap"
	}
	return fmt.Sprintf("%T", o)
}

func key(o client.Object) string { return kindOf(o) + " " + o.GetNamespace() + "/" + o.GetName() }

// mlflowBundleData is the hub's merged MLflow CA bundle's data, nil when it
// has none.
func (k *Kind) mlflowBundleData(ctx context.Context, cr *evalhubv1.EvalHub, in *Inputs) (map[string]string, error) {
	if in == nil || in.values.TrustConfigMap == "" {
		return nil, nil
	}
	cm, err := release.GetOptional(ctx, k.APIReader, cr.Namespace, in.values.TrustConfigMap, &corev1.ConfigMap{})
	if err != nil || cm == nil {
		return nil, err
	}
	return cm.Data, nil
}

// syncGrants writes the CR's grants: creates what is missing, updates what
// differs (a RoleBinding whose role changed is replaced: roleRef is
// immutable), deletes what is no longer granted; never touches an object
// without the CR's grant labels.
func (k *Kind) syncGrants(ctx context.Context, cr *evalhubv1.EvalHub, tenants []string, want []client.Object) (*GrantResult, error) {
	have, err := k.existingGrants(ctx, cr, tenants)
	if err != nil {
		return nil, err
	}
	res := &GrantResult{}
	wanted := map[string]bool{}
	var errs []error
	for _, w := range want {
		kk := key(w)
		wanted[kk] = true
		h, ok := have[kk]
		switch {
		case !ok:
			err := k.Client.Create(ctx, w)
			switch {
			case apierrors.IsAlreadyExists(err):
				res.Problems = append(res.Problems, k.taken(ctx, w, kk))
			case apierrors.IsNotFound(err) || (apierrors.IsForbidden(err) && strings.Contains(err.Error(), "being terminated")):
				res.Problems = append(res.Problems, fmt.Sprintf("%s: namespace %s does not exist or is being deleted", kk, w.GetNamespace()))
			case apierrors.IsForbidden(err) && w.GetNamespace() != cr.Namespace:
				res.Problems = append(res.Problems, fmt.Sprintf("%s: the operator may not write in namespace %s (installed for other namespaces): %v", kk, w.GetNamespace(), err))
			case err != nil:
				errs = append(errs, fmt.Errorf("create %s: %w", kk, err))
			}
		default:
			if err := k.updateGrant(ctx, h, w); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for kk, h := range have {
		if wanted[kk] {
			continue
		}
		if err := k.Client.Delete(ctx, h, client.Preconditions{UID: uidOf(h.GetUID())}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", kk, err))
		}
	}
	sort.Strings(res.Problems)
	return res, errors.Join(errs...)
}

func uidOf[T any](v T) *T { return &v }

// taken says whose an object of the grants' name is: another EvalHub's
// (the names eval-hub derives, which two EvalHubs can share), or someone
// else's.
func (k *Kind) taken(ctx context.Context, w client.Object, kk string) string {
	have := &metav1.PartialObjectMetadata{}
	have.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kindOf(w)))
	if _, ok := w.(*rbacv1.RoleBinding); ok {
		have.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"))
	}
	if err := k.APIReader.Get(ctx, client.ObjectKeyFromObject(w), have); err == nil {
		l := have.Labels
		if l[LabelGrant] == "true" && l[release.LabelOwnerKind] == evalhubv1.Kind {
			if _, rb := w.(*rbacv1.RoleBinding); rb {
				return fmt.Sprintf("%s is EvalHub %s/%s's: the operator leaves it to that EvalHub", kk, l[release.LabelOwnerNamespace], l[labelOwnerName])
			}
			return fmt.Sprintf("%s is EvalHub %s/%s's: eval-hub names its jobs' ServiceAccount <name>-<namespace>-job and their CA ConfigMaps <name>-service-ca and <name>-mlflow-ca-bundle, names these two EvalHubs share in namespace %s; the operator leaves it to that EvalHub: rename one of the two EvalHubs to serve both", kk, l[release.LabelOwnerNamespace], l[labelOwnerName], w.GetNamespace())
		}
	}
	return fmt.Sprintf("%s exists and is not this EvalHub's: the operator leaves it alone; delete or rename it", kk)
}

// Reaches implements release.Reacher: the tenants the EvalHub serves now
// (the sweeper deletes its grants in any other namespace, whether or not
// its reconcile runs).
func (k *Kind) Reaches(ctx context.Context, cr *evalhubv1.EvalHub) ([]string, error) {
	s, err := k.settings(ctx)
	if err != nil {
		return nil, err
	}
	tenants, err := k.readTenancy(ctx, cr, s)
	var f *status.Failure
	if errors.As(err, &f) {
		return nil, nil // a hub placed in a tenant namespace serves none
	}
	return tenants, err
}

// updateGrant brings an object of the grants to what is wanted.
func (k *Kind) updateGrant(ctx context.Context, have, want client.Object) error {
	same := equality.Semantic.DeepEqual(have.GetLabels(), want.GetLabels()) && equality.Semantic.DeepEqual(have.GetOwnerReferences(), want.GetOwnerReferences()) &&
		equality.Semantic.DeepEqual(have.GetAnnotations(), want.GetAnnotations())
	switch h := have.(type) {
	case *rbacv1.RoleBinding:
		w := want.(*rbacv1.RoleBinding)
		if h.RoleRef != w.RoleRef {
			if err := k.Client.Delete(ctx, h, client.Preconditions{UID: uidOf(h.UID)}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("replace %s: %w", key(h), err)
			}
			if err := k.Client.Create(ctx, w); err != nil {
				return fmt.Errorf("replace %s: %w", key(h), err)
			}
			return nil
		}
		if same && equality.Semantic.DeepEqual(h.Subjects, w.Subjects) {
			return nil
		}
		h.Labels, h.Annotations, h.OwnerReferences, h.Subjects = w.Labels, w.Annotations, w.OwnerReferences, w.Subjects
	case *corev1.ConfigMap:
		w := want.(*corev1.ConfigMap)
		injected := w.Annotations["service.beta.openshift.io/inject-cabundle"] == "true"
		if same && (injected || equality.Semantic.DeepEqual(h.Data, w.Data)) {
			return nil
		}
		h.Labels, h.Annotations, h.OwnerReferences = w.Labels, w.Annotations, w.OwnerReferences
		if !injected {
			h.Data = w.Data
		}
	case *corev1.ServiceAccount:
		if same {
			return nil
		}
		h.Labels, h.Annotations, h.OwnerReferences = want.GetLabels(), want.GetAnnotations(), want.GetOwnerReferences()
	}
	if err := k.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("update %s: %w", key(have), err)
	}
	return nil
}

// deleteGrants deletes every object of the CR's grants.
func (k *Kind) deleteGrants(ctx context.Context, cr *evalhubv1.EvalHub) error {
	have, err := k.existingGrants(ctx, cr, nil)
	if err != nil {
		return err
	}
	var errs []error
	for kk, h := range have {
		if err := k.Client.Delete(ctx, h, client.Preconditions{UID: uidOf(h.GetUID())}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", kk, err))
		}
	}
	return errors.Join(errs...)
}
