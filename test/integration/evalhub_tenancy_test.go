package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/evalhub"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// labelNamespace sets (value non-nil) or removes a Namespace's tenant label.
func labelNamespace(t *testing.T, ns string, value *string) {
	t.Helper()
	n := &corev1.Namespace{}
	require.NoError(t, env.Get("", ns, n))
	env.Update(t, n, func() {
		if value == nil {
			delete(n.Labels, evalhub.LabelTenant)
			return
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[evalhub.LabelTenant] = *value
	})
}

// grantNamespaces are the namespaces holding objects of the hub's grants.
func grantNamespaces(t *testing.T, hubNS, hub string) []string {
	t.Helper()
	sel := client.MatchingLabels{evalhub.LabelGrant: "true", "ai-stack-operator.io/owner-namespace": hubNS, "trustyai.opendatahub.io/owner-name": hub}
	set := map[string]bool{}
	var rbs rbacv1.RoleBindingList
	require.NoError(t, k8s.List(context.Background(), &rbs, sel))
	for _, b := range rbs.Items {
		set[b.Namespace] = true
	}
	var sas corev1.ServiceAccountList
	require.NoError(t, k8s.List(context.Background(), &sas, sel))
	for _, s := range sas.Items {
		set[s.Namespace] = true
	}
	var out []string
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// waitTenants waits for status.tenantNamespaces and the grants' namespaces
// to be the hub's own and the given tenants'.
func waitTenants(t *testing.T, hubNS, hub string, tenants ...string) {
	t.Helper()
	sort.Strings(tenants)
	want := append([]string{hubNS}, tenants...)
	sort.Strings(want)
	env.Eventually(t, fmt.Sprintf("tenants %v", tenants), func() error {
		cr := &evalhubv1.EvalHub{}
		if err := env.Get(hubNS, hub, cr); err != nil {
			return err
		}
		if got := strings.Join(cr.Status.TenantNamespaces, ","); got != strings.Join(tenants, ",") {
			return fmt.Errorf("status.tenantNamespaces %q", got)
		}
		if got := grantNamespaces(t, hubNS, hub); strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("grants in %v", got)
		}
		return nil
	})
}

// setHubSettings writes the tenancy keys into the operator's settings; the
// settings ConfigMap goes at the test's end if this made it (the other
// settings tests create their own), else the keys do.
func setHubSettings(t *testing.T, hubs, tenants string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	err := env.Get(operatorNamespace, settingsConfigMap, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: settingsConfigMap}, Data: map[string]string{}}
		require.NoError(t, k8s.Create(ctx, cm))
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta}) })
	} else {
		require.NoError(t, err)
		t.Cleanup(func() {
			left := &corev1.ConfigMap{}
			if env.Get(operatorNamespace, settingsConfigMap, left) == nil {
				env.Update(t, left, func() {
					delete(left.Data, evalhub.KeyHubNamespaces)
					delete(left.Data, evalhub.KeyTenantNamespaces)
				})
			}
		})
	}
	env.Update(t, cm, func() {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[evalhub.KeyHubNamespaces], cm.Data[evalhub.KeyTenantNamespaces] = hubs, tenants
	})
}

// The tenancy boundary: an EvalHub reaches no namespace but its own until
// an administrator names its namespace a hub namespace; then exactly the
// namespaces labelled for it (empty, "true" or its namespace as the value)
// and those the settings list; a namespace labelled for another hub
// namespace, or not at all, stays out of reach. Withdrawing a grant
// (label, setting) removes the objects there; deleting the EvalHub removes
// them everywhere. A multi-tenant EvalHub in a tenant namespace is refused,
// as upstream refuses it.
func TestEvalHubTenancyBoundary(t *testing.T) {
	ctx := context.Background()
	hubNS := env.NewNamespace(t, "hub")
	labelled, other, unlabelled, listed := env.NewNamespace(t, "ten"), env.NewNamespace(t, "ten"), env.NewNamespace(t, "ten"), env.NewNamespace(t, "ten")
	empty, otherHub := "", "some-other-hub"
	labelNamespace(t, labelled, &empty)
	labelNamespace(t, other, &otherHub)

	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: hubNS, Name: "hub"}, Spec: evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Providers: []string{}, Collections: []string{}}}
	require.NoError(t, k8s.Create(ctx, cr))
	got := waitEvalHub(t, hubNS, "hub", evalhub.TypeTenantsReady, metav1.ConditionTrue, "GrantsWritten")
	assert.Equal(t, evalhubv1.TenancyMulti, got.Spec.Tenancy)
	waitTenants(t, hubNS, "hub")

	// In its own namespace: the jobs' ServiceAccount and the bindings of the
	// shipped roles, owned by the EvalHub; the proxy's ClusterRoleBinding.
	job := &corev1.ServiceAccount{}
	require.NoError(t, env.Get(hubNS, "hub-"+hubNS+"-job", job))
	require.Len(t, job.OwnerReferences, 1)
	rb := &rbacv1.RoleBinding{}
	require.NoError(t, env.Get(hubNS, "evalhub."+hubNS+".hub.job-writer", rb))
	assert.Equal(t, "ai-stack-operator-evalhub-jobs-writer", rb.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: hubNS, Name: "hub-service"}}, rb.Subjects)
	require.NoError(t, env.Get(hubNS, "evalhub."+hubNS+".hub.job-access", rb))
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: hubNS, Name: "hub-" + hubNS + "-job"}}, rb.Subjects)
	crb := &rbacv1.ClusterRoleBinding{}
	require.NoError(t, env.Get("", "evalhub-proxy."+hubNS+".hub", crb))
	assert.Equal(t, "ai-stack-operator-trustyai-proxy", crb.RoleRef.Name)

	// Granted: the hub's namespace named, one namespace listed.
	setHubSettings(t, hubNS, listed)
	waitTenants(t, hubNS, "hub", labelled, listed)
	for _, ns := range []string{labelled, listed} {
		require.NoError(t, env.Get(ns, "hub-"+hubNS+"-job", &corev1.ServiceAccount{}), ns)
		require.NoError(t, env.Get(ns, "evalhub."+hubNS+".hub.model-secret", rb), ns)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: hubNS, Name: "hub-service"}}, rb.Subjects)
		assert.Empty(t, rb.OwnerReferences, "no owner across namespaces: labels say whose it is")
		ca := &corev1.ConfigMap{}
		require.NoError(t, env.Get(ns, "hub-service-ca", ca), ns)
		assert.Equal(t, "true", ca.Annotations["service.beta.openshift.io/inject-cabundle"])
	}
	for _, ns := range []string{other, unlabelled} {
		var rbs rbacv1.RoleBindingList
		require.NoError(t, k8s.List(ctx, &rbs, client.InNamespace(ns)))
		assert.Empty(t, rbs.Items, "%s was not granted to this hub", ns)
	}

	// A reconcile that changes nothing writes none of the grants.
	before := map[string]string{}
	for _, ns := range []string{hubNS, labelled, listed} {
		require.NoError(t, env.Get(ns, "evalhub."+hubNS+".hub.job-writer", rb))
		before[ns] = rb.ResourceVersion
	}
	// The pods turn ready: a reconcile (its grants' pass before its status)
	// writes Ready, and nothing of the grants.
	markReady(t, hubNS, "hub", 1)
	waitEvalHub(t, hubNS, "hub", status.TypeReady, metav1.ConditionTrue, "DeploymentReady")
	for ns, rv := range before {
		require.NoError(t, env.Get(ns, "evalhub."+hubNS+".hub.job-writer", rb))
		assert.Equal(t, rv, rb.ResourceVersion, "binding in %s rewritten by a reconcile that changed nothing", ns)
	}

	// A label naming this hub's namespace grants too; one withdrawn takes
	// the objects away.
	labelNamespace(t, unlabelled, &hubNS)
	waitTenants(t, hubNS, "hub", labelled, listed, unlabelled)
	labelNamespace(t, labelled, nil)
	waitTenants(t, hubNS, "hub", listed, unlabelled)
	assert.True(t, apierrors.IsNotFound(env.Get(labelled, "hub-"+hubNS+"-job", &corev1.ServiceAccount{})))

	// Single tenancy: its own namespace only.
	env.Update(t, got, func() { got.Spec.Tenancy = evalhubv1.TenancySingle })
	waitTenants(t, hubNS, "hub")
	env.Update(t, got, func() { got.Spec.Tenancy = evalhubv1.TenancyMulti })
	waitTenants(t, hubNS, "hub", listed, unlabelled)

	// A multi-tenant EvalHub in a tenant namespace is refused; nothing of it
	// is applied.
	misplaced := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: unlabelled, Name: "misplaced"}, Spec: evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}}}
	require.NoError(t, k8s.Create(ctx, misplaced))
	m := waitEvalHub(t, unlabelled, "misplaced", status.TypeReconciled, metav1.ConditionFalse, "InvalidPlacement")
	assert.Contains(t, meta.FindStatusCondition(m.Status.Conditions, status.TypeReconciled).Message, "spec.tenancy")
	assert.Empty(t, grantNamespaces(t, unlabelled, "misplaced"))

	// Deleted: its objects go from every namespace.
	require.NoError(t, k8s.Delete(ctx, got))
	env.Eventually(t, "the grants go with the EvalHub", func() error {
		if ns := grantNamespaces(t, hubNS, "hub"); len(ns) > 0 {
			return fmt.Errorf("grants left in %v", ns)
		}
		return nil
	})
	env.Eventually(t, "the proxy's binding goes", env.GoneFrom(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: crb.Name}}))
	for _, ns := range []string{listed, unlabelled} {
		assert.True(t, apierrors.IsNotFound(env.Get(ns, "hub-service-ca", &corev1.ConfigMap{})), ns)
	}
}

// tenantRoleBindings are the names of the hub's RoleBindings in namespace ns.
func tenantRoleBindings(t *testing.T, ns, hubNS, hub string) []string {
	t.Helper()
	var rbs rbacv1.RoleBindingList
	require.NoError(t, k8s.List(context.Background(), &rbs, client.InNamespace(ns), client.MatchingLabels{evalhub.LabelGrant: "true", "ai-stack-operator.io/owner-namespace": hubNS, "trustyai.opendatahub.io/owner-name": hub}))
	var out []string
	for _, rb := range rbs.Items {
		out = append(out, rb.Name)
	}
	sort.Strings(out)
	return out
}

// Two EvalHubs whose name and namespace join to the same string, x-y in
// namespace h and x in namespace y-h, share a tenant: each gets all its
// RoleBindings there (upstream's names, and this operator's before, were
// the same for both: whoever came first took them, the other got no
// permission there). The jobs' ServiceAccount is eval-hub's name,
// <name>-<namespace>-job, the same for both: the second is told whose it is
// and why, and nothing of the first is touched. (Second security review,
// finding 3.)
func TestEvalHubGrantNamesOfACollidingPair(t *testing.T) {
	ctx := context.Background()
	suffix := strings.ToLower(rand.String(5))
	h, yh := "h-"+suffix, "y-h-"+suffix
	shared := env.NewNamespace(t, "shared")
	for _, ns := range []string{h, yh} {
		require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		t.Cleanup(func() {
			_ = k8s.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		})
	}
	setHubSettings(t, h+","+yh, shared)
	spec := evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Providers: []string{}, Collections: []string{}}
	first := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: h, Name: "x-y"}, Spec: spec}
	require.NoError(t, k8s.Create(ctx, first))
	waitEvalHub(t, h, "x-y", evalhub.TypeTenantsReady, metav1.ConditionTrue, "GrantsWritten")
	waitTenants(t, h, "x-y", shared)
	sa := &corev1.ServiceAccount{}
	require.NoError(t, env.Get(shared, "x-y-"+h+"-job", sa))
	firstRBs := tenantRoleBindings(t, shared, h, "x-y")
	require.Len(t, firstRBs, 9)

	second := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: yh, Name: "x"}, Spec: spec}
	require.NoError(t, k8s.Create(ctx, second))
	got := waitEvalHub(t, yh, "x", evalhub.TypeTenantsReady, metav1.ConditionFalse, "GrantsIncomplete")
	msg := meta.FindStatusCondition(got.Status.Conditions, evalhub.TypeTenantsReady).Message
	assert.Contains(t, msg, "ServiceAccount "+shared+"/x-y-"+h+"-job is EvalHub "+h+"/x-y's")
	assert.Contains(t, msg, "<name>-<namespace>-job")
	env.Eventually(t, "the second hub's RoleBindings in the shared tenant", func() error {
		if got := tenantRoleBindings(t, shared, yh, "x"); len(got) != 9 {
			return fmt.Errorf("%v", got)
		}
		return nil
	})
	for _, n := range tenantRoleBindings(t, shared, yh, "x") {
		assert.NotContains(t, firstRBs, n, "a RoleBinding name both EvalHubs need")
	}
	assert.Equal(t, firstRBs, tenantRoleBindings(t, shared, h, "x-y"), "the first hub's bindings untouched")
	after := &corev1.ServiceAccount{}
	require.NoError(t, env.Get(shared, sa.Name, after))
	assert.Equal(t, sa.ResourceVersion, after.ResourceVersion, "the first hub's ServiceAccount untouched")
}

// An EvalHub's grants do not outlive it, nor its grant: they carry its UID,
// and the sweeper (every second in this suite; 10 minutes by default)
// deletes them when that UID is gone (a finalizer removed by hand: no
// reconcile runs) and, for a live EvalHub whose reconcile fails before its
// grants (an invalid spec), in a namespace no longer granted. (Second
// security review, finding 4: a ServiceAccount of the gone hub's server
// name kept Secret access in every tenant.)
func TestEvalHubGrantsAreSweptWithoutAReconcile(t *testing.T) {
	ctx := context.Background()
	hubNS := env.NewNamespace(t, "hub")
	a, b := env.NewNamespace(t, "ten"), env.NewNamespace(t, "ten")
	setHubSettings(t, hubNS, a+","+b)
	cr := &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: hubNS, Name: "hub"}, Spec: evalhubv1.EvalHubSpec{Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Providers: []string{}, Collections: []string{}}}
	require.NoError(t, k8s.Create(ctx, cr))
	waitTenants(t, hubNS, "hub", a, b)
	require.NoError(t, env.Get(hubNS, "hub", cr))
	for _, name := range tenantRoleBindings(t, a, hubNS, "hub") {
		rb := &rbacv1.RoleBinding{}
		require.NoError(t, env.Get(a, name, rb))
		assert.Equal(t, string(cr.UID), rb.Labels["ai-stack-operator.io/owner-uid"], name)
	}

	// The reconcile fails before the grants (no database: refused, nothing
	// applied), then namespace b is no longer granted.
	env.Update(t, cr, func() { cr.Spec.Database = nil })
	waitEvalHub(t, hubNS, "hub", status.TypeReconciled, metav1.ConditionFalse, "DatabaseConfigMissing")
	setHubSettings(t, hubNS, a)
	env.Eventually(t, "the grants in the withdrawn namespace swept", func() error {
		if got := tenantRoleBindings(t, b, hubNS, "hub"); len(got) > 0 {
			return fmt.Errorf("left in %s: %v", b, got)
		}
		if err := env.Get(b, "hub-"+hubNS+"-job", &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the jobs' ServiceAccount in %s: %v", b, err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		return nil
	})
	assert.Len(t, tenantRoleBindings(t, a, hubNS, "hub"), 9, "the granted namespace keeps its grants")

	// The finalizer removed by hand: the EvalHub goes without a reconcile.
	env.Update(t, cr, func() { cr.Finalizers = nil })
	require.NoError(t, k8s.Delete(ctx, cr))
	env.Eventually(t, "the grants of the gone EvalHub swept", func() error {
		if ns := grantNamespaces(t, hubNS, "hub"); len(ns) > 0 {
			for _, n := range ns {
				if n != hubNS { // its own namespace's are garbage-collected by owner (no collector here)
					return fmt.Errorf("grants left in %v", ns)
				}
			}
		}
		var cms corev1.ConfigMapList
		require.NoError(t, k8s.List(ctx, &cms, client.InNamespace(a), client.MatchingLabels{evalhub.LabelGrant: "true"}))
		if len(cms.Items) > 0 {
			return fmt.Errorf("ConfigMaps left in %s", a)
		}
		return nil
	})
}
