package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// bundleCSV is the committed bundle's ClusterServiceVersion.
func bundleCSV(t *testing.T) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "bundle", "manifests", "ai-stack-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(b, csv); err != nil {
		t.Fatal(err)
	}
	return csv
}

// olmRBAC grants the ServiceAccount what OLM grants a CSV's operator in an
// install mode: clusterPermissions as a ClusterRole; permissions as Roles in
// the operator's namespace and in each target namespace, or as a
// ClusterRole when the operator group targets all namespaces.
func olmRBAC(t *testing.T, ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, name, opNS string, targets []string) {
	t.Helper()
	spec := csv.Spec.InstallStrategy.StrategySpec
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: opNS, Name: name}}
	var objs []client.Object
	clusterRules := func(suffix string, rules []rbacv1.PolicyRule) {
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + suffix}, Rules: rules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + suffix}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name + suffix}, Subjects: subject})
	}
	for _, p := range spec.ClusterPermissions {
		clusterRules("-cluster", p.Rules)
	}
	for _, p := range spec.Permissions {
		if len(targets) == 0 {
			clusterRules("-all", p.Rules)
			continue
		}
		namespaces := []string{opNS} // the install strategy's Roles
		for _, ns := range targets {
			if !slices.Contains(namespaces, ns) { // the operator group's copies
				namespaces = append(namespaces, ns)
			}
		}
		for _, ns := range namespaces {
			objs = append(objs,
				&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: p.Rules},
				&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subject})
		}
	}
	objs = append(objs, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: name}})
	for _, o := range objs {
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = k8s.Delete(context.Background(), o)
		}
	})
}

var (
	managerOnce sync.Once
	managerBin  string
	managerErr  error
)

// managerBinary is the operator's binary (framework.OperatorBinary), built
// at most once per run.
func managerBinary(t *testing.T) string {
	t.Helper()
	managerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rehearsal-")
		if err != nil {
			managerErr = err
			return
		}
		managerBin, managerErr = framework.OperatorBinary(dir)
	})
	if managerErr != nil {
		t.Fatal(managerErr)
	}
	return managerBin
}

// lifecycleIn runs both kinds' lifecycle in a namespace: Ready with pods,
// then deleted with everything they made.
func lifecycleIn(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	cr := framework.LLSD(ns, "rehearsal")
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	tas := framework.TASDatabase(ns, "rehearsal-tas")
	if err := k8s.Create(ctx, tas); err != nil {
		t.Fatal(err)
	}
	env.WaitPhase(t, cr, llamav1alpha1.PhaseReady, 1)
	env.WaitTASReady(t, tas)
	for _, o := range []client.Object{cr, tas} {
		if err := k8s.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, "both deleted in "+ns, func() error {
		for _, o := range []client.Object{&llamav1alpha1.LlamaStackDistribution{ObjectMeta: cr.ObjectMeta}, &trustyv1.TrustyAIService{ObjectMeta: tas.ObjectMeta}} {
			if err := env.GoneFrom(o)(); err != nil {
				return err
			}
		}
		return nil
	})
}

// The OLM install rehearsal: for each install mode the CSV supports, the
// operator runs as a ServiceAccount holding exactly what OLM would grant
// from the committed bundle's CSV (clusterPermissions and permissions, scoped
// as OLM scopes them), with the CSV Deployment's args and env, and runs both
// kinds' lifecycle in its target namespaces. A permission the code needs and
// the CSV lacks fails it (a refused request is logged "forbidden", or the
// lifecycle never completes). With two target namespaces, a CR elsewhere is
// ignored, and no cluster-wide list of namespaced objects can succeed (the
// ServiceAccount holds only Roles for them), yet the operator's namespace
// (settings, lease, release records) is served.
func TestInstallRehearsalWithTheBundlesPermissions(t *testing.T) {
	ctx := context.Background()
	csv := bundleCSV(t)
	// The suite installed config/crd/bases; the bundle's CRDs are those files
	// (make verify keeps them so), so the cluster holds the bundle's CRDs.
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(owned.Name, ".")
		file := group + "_" + strings.Split(owned.Name, ".")[0] + ".yaml"
		inBundle, err1 := os.ReadFile(filepath.Join("..", "..", "bundle", "manifests", file))
		installed, err2 := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
		if err1 != nil || err2 != nil || !bytes.Equal(inBundle, installed) {
			t.Fatalf("the bundle's CRD %s is not the one installed (%v, %v): run make bundle", file, err1, err2)
		}
	}
	supported := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		supported[m.Type] = m.Supported
	}
	installProxyRole(t, ctx) // a bundle object: OLM creates it with the CSV
	for _, mode := range []struct {
		name    operatorsv1alpha1.InstallModeType
		opNS    string
		targets []string // nil: all namespaces
		ignored string   // a namespace outside the targets
	}{
		{operatorsv1alpha1.InstallModeTypeOwnNamespace, "olm-own", []string{"olm-own"}, "olm-own-outside"},
		{operatorsv1alpha1.InstallModeTypeSingleNamespace, "olm-single", []string{"olm-single-target"}, ""},
		{operatorsv1alpha1.InstallModeTypeMultiNamespace, "olm-multi", []string{"olm-multi-a", "olm-multi-b"}, "olm-multi-outside"},
		{operatorsv1alpha1.InstallModeTypeAllNamespaces, "olm-all", nil, ""},
	} {
		t.Run(string(mode.name), func(t *testing.T) {
			if !supported[mode.name] {
				t.Fatalf("the CSV does not support %s", mode.name)
			}
			workNS := mode.targets
			if workNS == nil {
				workNS = []string{"olm-all-anywhere"}
			}
			for _, ns := range append(append([]string{mode.opNS}, workNS...), mode.ignored) {
				if ns == "" {
					continue
				}
				if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
			sa := "rehearsal-" + strings.ToLower(string(mode.name))
			olmRBAC(t, ctx, csv, sa, mode.opNS, mode.targets)
			stop := framework.RunAsCSV(t, managerBinary(t), csv, framework.ServiceAccountKubeconfig(t, config, mode.opNS, sa), mode.opNS, mode.targets)
			defer stop()
			for _, ns := range workNS {
				lifecycleIn(t, ctx, ns)
			}
			// The release records and the lease live in the operator's namespace.
			lease := &coordinationv1.Lease{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: mode.opNS, Name: "ai-stack-operator.io"}, lease); err != nil {
				t.Errorf("the leader election lease in %s: %v", mode.opNS, err)
			}
			if mode.ignored != "" {
				outside := framework.LLSD(mode.ignored, "outside")
				if err := k8s.Create(ctx, outside); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Second)
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(outside), outside); err != nil {
					t.Fatal(err)
				}
				if outside.Status.Phase != "" || len(outside.Finalizers) > 0 {
					t.Errorf("a CR outside the target namespaces was reconciled: %+v", outside.Status)
				}
				if err := k8s.Delete(ctx, outside); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
