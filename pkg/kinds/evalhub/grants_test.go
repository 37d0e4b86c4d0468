package evalhub

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// Tenants: nothing until the hub's namespace is granted; then the listed
// namespaces and those labelled for it; never its own; none in single
// tenancy.
func TestTenants(t *testing.T) {
	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "hub", Namespace: "ops"}, Spec: evalhubv1.EvalHubSpec{Tenancy: evalhubv1.TenancyMulti}}
	labelled := map[string]string{"a": "", "b": "true", "c": "ops", "d": "elsewhere", "ops": ""}
	assert.Empty(t, Tenants(cr, tenancyInputs{Labelled: labelled, TenantNamespaces: []string{"e"}}), "the hub's namespace is not granted")
	in := tenancyInputs{HubNamespaces: []string{"ops"}, Labelled: labelled, TenantNamespaces: []string{"e", "a"}}
	assert.Equal(t, []string{"a", "b", "c", "e"}, Tenants(cr, in))
	cr.Spec.Tenancy = evalhubv1.TenancySingle
	assert.Empty(t, Tenants(cr, in))
}

// The grants: in the hub's namespace, owned; in a tenant, labelled, with
// the service CA ConfigMap and a copy of the MLflow bundle; the server's
// bindings name its ServiceAccount in the hub's namespace, the jobs' their
// own namespace's; every role bound is a shipped one.
func TestGrantObjects(t *testing.T) {
	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "hub", Namespace: "ops", UID: "u"}}
	objs := grantObjects(cr, []string{"team"}, map[string]string{"ca-bundle.crt": "pem"}, true)
	bound := map[string]bool{}
	for _, r := range BoundRoles() {
		bound[r] = true
	}
	byNS := map[string]int{}
	for _, o := range objs {
		byNS[o.GetNamespace()]++
		assert.True(t, ours(cr, o.GetLabels()), "%s/%s", o.GetNamespace(), o.GetName())
		copied := maps.Clone(o.GetLabels())
		delete(copied, release.LabelManaged)
		assert.False(t, ours(cr, copied), "a copy without the operator's label is someone else's")
		for k, v := range grantSelector(cr) {
			assert.Equal(t, v, o.GetLabels()[k], "the selector finds %s/%s", o.GetNamespace(), o.GetName())
		}
		assert.Contains(t, grantSelector(cr), release.LabelManaged)
		if o.GetNamespace() == "ops" {
			require.Len(t, o.GetOwnerReferences(), 1)
		} else {
			assert.Empty(t, o.GetOwnerReferences())
		}
		rb, ok := o.(*rbacv1.RoleBinding)
		if !ok {
			continue
		}
		assert.True(t, bound[rb.RoleRef.Name], rb.RoleRef.Name)
		s := rb.Subjects[0]
		if strings.HasSuffix(s.Name, "-service") {
			assert.Equal(t, "ops", s.Namespace)
		} else {
			assert.Equal(t, "hub-ops-job", s.Name)
			assert.Equal(t, rb.Namespace, s.Namespace)
		}
	}
	assert.Equal(t, 1+12, byNS["ops"], "the jobs' ServiceAccount and 12 bindings")
	assert.Equal(t, 1+9+2, byNS["team"], "the jobs' ServiceAccount, 9 bindings, 2 ConfigMaps")
	var copied bool
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "hub-mlflow-ca-bundle" {
			copied = cm.Data["ca-bundle.crt"] == "pem"
		}
	}
	assert.True(t, copied)
}

// norm is upstream's name rule: lowercase DNS labels, long ones cut with a
// hash of the whole.
func TestNorm(t *testing.T) {
	assert.Equal(t, "evalhub-opendatahub", norm("evalhub.opendatahub"))
	assert.Equal(t, "x", norm("..."))
	long := strings.Repeat("a", 70)
	n := norm(long + "-job")
	assert.Len(t, n, 63)
	assert.NotEqual(t, n, norm(long+"-jobs"))
}

// Where the operator may not list across the cluster (installed for some
// namespaces), the grants are found in the hub's namespace and its tenants,
// now and at the last status.
func TestExistingGrantsWithoutClusterList(t *testing.T) {
	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "hub", Namespace: "ops"}, Status: evalhubv1.EvalHubStatus{TenantNamespaces: []string{"was"}}}
	var seed []client.Object
	for _, ns := range []string{"ops", "now", "was", "unknown"} {
		seed = append(seed, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub-ops-job", Labels: grantLabels(cr)}})
	}
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).WithObjects(seed...).Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			o := &client.ListOptions{}
			o.ApplyOptions(opts)
			if o.Namespace == "" {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "", fmt.Errorf("cluster-wide"))
			}
			return c.List(ctx, list, opts...)
		},
	})
	k := &Kind{Deps: release.Deps{APIReader: c, Client: c}}
	have, err := k.existingGrants(context.Background(), cr, []string{"now"})
	require.NoError(t, err)
	var keys []string
	for kk := range have {
		keys = append(keys, kk)
	}
	sort.Strings(keys)
	assert.Equal(t, []string{"ServiceAccount now/hub-ops-job", "ServiceAccount ops/hub-ops-job", "ServiceAccount was/hub-ops-job"}, keys)
}

// Names the operator chooses cannot collide across hub namespaces: EvalHub
// x-y in namespace h and EvalHub x in namespace y-h (whose upstream names
// <name>-<namespace>-<role>-rb are the same) get distinct RoleBindings in a
// tenant they share, and every grant carries its EvalHub's UID. The jobs'
// ServiceAccount is eval-hub's name (<name>-<namespace>-job), the same for
// both: the operator cannot rename it, and the second hub is told
// (TestEvalHubGrantNamesOfACollidingPair, test/integration).
func TestGrantNamesDoNotCollide(t *testing.T) {
	a := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "x-y", Namespace: "h", UID: "ua"}}
	b := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "y-h", UID: "ub"}}
	names := func(cr *evalhubv1.EvalHub) (rbs map[string]bool, sa string) {
		rbs = map[string]bool{}
		for _, o := range grantObjects(cr, []string{"shared"}, nil, true) {
			assert.Equal(t, string(cr.UID), o.GetLabels()[release.LabelOwnerUID], "%T %s", o, o.GetName())
			if o.GetNamespace() != "shared" {
				continue
			}
			switch o.(type) {
			case *rbacv1.RoleBinding:
				rbs[o.GetName()] = true
			case *corev1.ServiceAccount:
				sa = o.GetName()
			}
		}
		return rbs, sa
	}
	ra, saA := names(a)
	rb, saB := names(b)
	require.Len(t, ra, 9)
	for n := range ra {
		assert.False(t, rb[n], "RoleBinding %s is both EvalHubs'", n)
		assert.True(t, strings.HasPrefix(n, "evalhub.h.x-y."), n)
	}
	assert.Equal(t, "x-y-h-job", saA)
	assert.Equal(t, saA, saB, "eval-hub's name for the jobs' ServiceAccount, not the operator's to choose")
}

// evalhub-tenant-secrets: disabled leaves the hub without Secret access in
// its tenants (upstream's model-secret role is bound in its own namespace
// only); enabled, the default, binds it everywhere as upstream does.
func TestTenantSecretsSetting(t *testing.T) {
	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Name: "hub", Namespace: "ops", UID: "u"}}
	secretRole := func(tenantSecrets bool) map[string]bool {
		out := map[string]bool{}
		for _, o := range grantObjects(cr, []string{"team"}, nil, tenantSecrets) {
			if rb, ok := o.(*rbacv1.RoleBinding); ok && rb.RoleRef.Name == RolePrefix+roleModelSecret {
				out[rb.Namespace] = true
			}
		}
		return out
	}
	assert.Equal(t, map[string]bool{"ops": true, "team": true}, secretRole(true))
	assert.Equal(t, map[string]bool{"ops": true}, secretRole(false))
	s, err := ParseSettings(nil, nil, nil, "op")
	require.NoError(t, err)
	assert.True(t, s.TenantSecrets, "upstream's rules by default")
	s, err = ParseSettings(nil, map[string]string{KeyTenantSecrets: "disabled"}, nil, "op")
	require.NoError(t, err)
	assert.False(t, s.TenantSecrets)
	_, err = ParseSettings(nil, map[string]string{KeyTenantSecrets: "off"}, nil, "op")
	assert.ErrorContains(t, err, KeyTenantSecrets)
}
