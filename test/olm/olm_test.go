// Package olm installs, upgrades and uninstalls the operator through a real
// OLM v0 on the local cluster: olm-operator, catalog-operator and the package
// server of operator-lifecycle-manager v0.38.0 and `opm serve` of
// operator-registry v1.61.0 (hack/tools/olm, built into bin/olm by
// hack/tools.sh), as processes against the local cluster's API server, the
// package server registered as the aggregated API
// packages.operators.coreos.com. config/gitops/operator is applied as it is,
// the CatalogSource's image aside: opm serves the committed catalog/ on
// loopback and the CatalogSource names that address (spec.address), as OLM
// allows for a registry it does not run. And through a real OLM v1
// (olmv1_test.go): catalogd and operator-controller v1.5.1 with the images on
// a registry on loopback.
//
// kwok runs no containers, so what runs in pods is run here instead: OLM v0
// is served the catalog without its bundle image, so it installs from the
// bundle objects the catalog holds (no unpack Job), and the operator's binary
// runs as the ServiceAccount OLM created, with the RBAC OLM granted from the
// CSV, with the CSV Deployment's args and env. Each test has a local cluster
// of its own.
package olm

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	olmgen "github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

const (
	// olmNS is OLM's own namespace (its global catalog namespace).
	olmNS = "olm"
	// opNS is the operator's namespace, as config/gitops/operator names it.
	opNS = framework.OperatorNamespace
	// upgraded is the version the test builds on top of the catalog's.
	upgraded = "0.2.0"
)

var (
	config *rest.Config
	env    *framework.Env
	k8s    client.Client // the operator's kinds
	olmc   client.Client // OLM's kinds, CRDs, the package API
	olmEnv *framework.Env
	dir    string
)

// setup starts a local cluster of the test's own with the CRDs of crds
// (OLM's) and points the package's clients at it; cleanups stop it.
func setup(t *testing.T, crds string) {
	t.Helper()
	ctrllog.SetLogger(logr.Discard()) // the local cluster's envtest logs nothing here
	dir = t.TempDir()
	c, err := localcluster.Start(context.Background(), localcluster.Options{Dir: dir, CRDDirs: []string{crds}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	config = c.Config
	if env, err = framework.NewEnv(config, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	k8s = env.Client
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operatorsv1alpha1.AddToScheme, operatorsv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	if olmc, err = client.New(config, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	olmEnv = &framework.Env{Client: olmc, Config: config, Timeout: env.Timeout}
}

// tool is a binary of bin/ that hack/tools.sh builds.
func tool(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(framework.Root(), "bin", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: run hack/tools.sh (make test does)", err)
	}
	return p
}

// proc is a process of OLM's, its output in a file of the test's folder.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// start runs bin/<bin> with args, as the cluster's administrator.
func start(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log")}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(tool(t, bin), args...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(t); _ = f.Close() })
	return p
}

func (p *proc) stop(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	if t.Failed() {
		b, _ := os.ReadFile(p.log)
		if lines := strings.Split(string(b), "\n"); len(lines) <= 45 {
			t.Logf("%s's log:\n%s", p.name, b)
		} else {
			t.Logf("%s's log, head:\n%s\ntail:\n%s", p.name, strings.Join(lines[:15], "\n"), framework.Tail(string(b), 30))
		}
	}
}

// withBundleImages copies catalog src with each bundle's image replaced by
// image(its name) and returns the copy's folder.
func withBundleImages(t *testing.T, src string, image func(bundle string) string) string {
	t.Helper()
	cat := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(cat, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cat, olmgen.Package, "bundle-v*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundle in %s: %v", src, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc["schema"] != "olm.bundle" {
			t.Fatalf("%s: schema %v, want one olm.bundle", f, doc["schema"])
		}
		doc["image"] = image(doc["name"].(string))
		if b, err = yaml.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// freePort is a loopback TCP port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serveCatalog runs `opm serve` on a catalog directory and returns its
// address once it answers.
func serveCatalog(t *testing.T, name, catalogDir string) string {
	t.Helper()
	port := freePort(t)
	start(t, name, "olm/opm", "serve", catalogDir, "--port", strconv.Itoa(port),
		"--termination-log", filepath.Join(dir, name+".termination"), "--pprof-addr", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env.Eventually(t, "opm serve on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
	return addr
}

// startOLM runs OLM v0: olm-operator, catalog-operator, and the package
// server registered as the aggregated API packages.operators.coreos.com/v1
// (its Service an ExternalName to loopback: the API server's aggregator
// resolves it without a service proxy).
func startOLM(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := olmc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNS}}); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "kubeconfig")
	start(t, "olm-operator", "olm/olm", "--namespace", olmNS, "--writeStatusName", "", "--writePackageServerStatusName", "")
	// Bundle unpacking would run Jobs with these images; the catalog serves
	// objects, so none runs.
	start(t, "catalog-operator", "olm/catalog", "--namespace", olmNS, "--writeStatusName", "",
		"--configmapServerImage", "unused.invalid/configmap-server", "--opmImage", "unused.invalid/opm", "--util-image", "unused.invalid/util")
	port := freePort(t)
	// hack/tools/olm/package-server: OLM's command with delegated auth off
	// (v0.38.0's authorizer reads only an in-cluster configuration).
	start(t, "package-server", "olm/package-server", "--kubeconfig", kc,
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--cert-dir", filepath.Join(dir, "package-server-certs"),
		"--global-namespace", olmNS)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: olmNS, Name: "packageserver-service"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}}},
	}
	api := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.packages.operators.coreos.com"},
		"spec": map[string]any{
			"group": "packages.operators.coreos.com", "version": "v1",
			"service":               map[string]any{"namespace": olmNS, "name": svc.Name, "port": int64(port)},
			"insecureSkipTLSVerify": true, // the package server's certificate is self-signed
			"groupPriorityMinimum":  int64(2000), "versionPriority": int64(15),
		},
	}}
	for _, o := range []client.Object{svc, api} {
		if err := olmc.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, "the package API available", func() error {
		if err := olmc.Get(ctx, client.ObjectKeyFromObject(api), api); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Available" && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("APIService conditions %v", conds)
	})
}

// gitopsOperator is config/gitops/operator as kustomize builds it, in sync
// wave order, with the CatalogSource pointed at addr instead of its image.
func gitopsOperator(t *testing.T, addr string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(framework.Root(), "config", "gitops", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "CatalogSource" {
			spec := m["spec"].(map[string]any)
			for _, k := range []string{"image", "grpcPodConfig", "updateStrategy"} {
				if _, ok := spec[k]; !ok {
					t.Fatalf("config/gitops/operator's CatalogSource has no spec.%s any more: update this test", k)
				}
				delete(spec, k) // what only a catalog image has
			}
			spec["address"] = addr
		}
		objs = append(objs, u)
	}
	wave := func(u *unstructured.Unstructured) int {
		n, _ := strconv.Atoi(u.GetAnnotations()["argocd.argoproj.io/sync-wave"])
		return n
	}
	sort.SliceStable(objs, func(i, j int) bool { return wave(objs[i]) < wave(objs[j]) })
	return objs
}

// transcript logs every change of the Subscriptions, InstallPlans and CSVs
// of the operator's namespace (objects and phases) until stopped.
type transcript struct {
	t     *testing.T
	start time.Time
	seen  map[string]string
}

func watchOLM(t *testing.T, ctx context.Context) (stop func()) {
	tr := &transcript{t: t, start: time.Now(), seen: map[string]string{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			tr.look(ctx)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() { cancel(); <-done }
}

func (tr *transcript) note(key, state string) {
	if tr.seen[key] == state {
		return
	}
	tr.seen[key] = state
	tr.t.Logf("[%6.1fs] %s %s", time.Since(tr.start).Seconds(), key, state)
}

func (tr *transcript) look(ctx context.Context) {
	subs := &operatorsv1alpha1.SubscriptionList{}
	if olmc.List(ctx, subs, client.InNamespace(opNS)) == nil {
		for _, s := range subs.Items {
			ip := ""
			if s.Status.InstallPlanRef != nil {
				ip = s.Status.InstallPlanRef.Name
			}
			tr.note("Subscription/"+s.Name, fmt.Sprintf("state=%s currentCSV=%s installedCSV=%s installPlan=%s approval=%s", s.Status.State, s.Status.CurrentCSV, s.Status.InstalledCSV, ip, s.Spec.InstallPlanApproval))
		}
	}
	ips := &operatorsv1alpha1.InstallPlanList{}
	if olmc.List(ctx, ips, client.InNamespace(opNS)) == nil {
		for _, p := range ips.Items {
			var steps []string
			for _, s := range p.Status.Plan {
				steps = append(steps, s.Resource.Kind+"/"+s.Resource.Name+":"+string(s.Status))
			}
			tr.note("InstallPlan/"+p.Name, fmt.Sprintf("phase=%s approved=%t csvs=%v bundleLookups=%d steps=%d", p.Status.Phase, p.Spec.Approved, p.Spec.ClusterServiceVersionNames, len(p.Status.BundleLookups), len(steps)))
			if p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete {
				tr.note("InstallPlan/"+p.Name+" steps", strings.Join(steps, " "))
			}
		}
	}
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	if olmc.List(ctx, csvs, client.InNamespace(opNS)) == nil {
		for _, c := range csvs.Items {
			tr.note("ClusterServiceVersion/"+c.Name, fmt.Sprintf("phase=%s reason=%s", c.Status.Phase, c.Status.Reason))
		}
	}
}

// csvIn waits for the named CSV in the operator's namespace to reach phase.
func csvIn(t *testing.T, ctx context.Context, name string, phase operatorsv1alpha1.ClusterServiceVersionPhase) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	env.Eventually(t, "CSV "+name+" "+string(phase), func() error {
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: name}, csv); err != nil {
			return err
		}
		if csv.Status.Phase != phase {
			return fmt.Errorf("phase %s (%s: %s)", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
		}
		return nil
	})
	return csv
}

// packageChannel is the PackageManifest's channel head as OperatorHub reads
// it, through the aggregated package API.
func packageChannel(ctx context.Context) (string, error) {
	pm := &unstructured.Unstructured{}
	pm.SetAPIVersion("packages.operators.coreos.com/v1")
	pm.SetKind("PackageManifest")
	if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: olmgen.Package}, pm); err != nil {
		return "", err
	}
	chans, _, _ := unstructured.NestedSlice(pm.Object, "status", "channels")
	def, _, _ := unstructured.NestedString(pm.Object, "status", "defaultChannel")
	var out []string
	for _, c := range chans {
		m := c.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s", m["name"], m["currentCSV"]))
	}
	return fmt.Sprintf("default=%s channels=%v", def, out), nil
}

// operatorRunner builds the operator's binary once; what it returns runs
// it as a CSV's Deployment would (framework.RunAsCSV): as that Deployment's
// ServiceAccount, with the RBAC OLM granted it, the Deployment's args and
// env. Its result stops it.
func operatorRunner(t *testing.T) func(csv *operatorsv1alpha1.ClusterServiceVersion) (stop func()) {
	t.Helper()
	bin, err := framework.OperatorBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return func(csv *operatorsv1alpha1.ClusterServiceVersion) func() {
		sa := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName
		return framework.RunAsCSV(t, bin, csv, framework.ServiceAccountKubeconfig(t, config, opNS, sa), opNS, nil)
	}
}

// crs is a CR of each kind in a namespace of their own.
type crs struct {
	ns   string
	llsd *llamav1alpha1.LlamaStackDistribution
	tas  *trustyv1.TrustyAIService
	ogx  *ogxv1beta1.OGXServer
	job  *lmv1alpha1.LMEvalJob
}

// newCRs creates a LlamaStackDistribution, a TrustyAIService, an OGXServer
// and an LMEvalJob, and waits until the operator has the first three Ready
// and the job Complete (its driver's Role and RoleBinding made under the
// operator's RBAC: a Role grants only what its creator holds).
func newCRs(t *testing.T, ctx context.Context, prefix string) *crs {
	t.Helper()
	ns := env.NewNamespace(t, prefix)
	c := &crs{ns: ns, llsd: framework.LLSD(ns, "llsd"), tas: framework.TASDatabase(ns, "tas"), ogx: framework.OGX(ns, "ogx"), job: framework.LMEvalJob(ns, "job")}
	for _, o := range []client.Object{c.llsd, c.tas, c.ogx, c.job} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	c.ready(t)
	return c
}

// ready waits until the three are Ready and the job Complete.
func (c *crs) ready(t *testing.T) {
	t.Helper()
	env.WaitPhase(t, c.llsd, llamav1alpha1.PhaseReady, 1)
	env.WaitTASReady(t, c.tas)
	env.WaitOGX(t, c.ns, c.ogx.Name, ogxv1beta1.OGXServerPhaseReady)
	env.WaitLMEvalJob(t, c.ns, c.job.Name, lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded)
}

// workloads are the CRs' Deployments (by generation) and pods (by UID).
func (c *crs) workloads(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	deps := &appsv1.DeploymentList{}
	if err := k8s.List(ctx, deps, client.InNamespace(c.ns)); err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(c.ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range deps.Items {
		out["Deployment/"+d.Name] = fmt.Sprintf("generation=%d", d.Generation)
	}
	for _, p := range pods.Items {
		out["Pod/"+p.Name] = string(p.UID)
	}
	return out
}

// untouchedSince waits until the restarted operator has the CRs Ready and
// has reconciled everything, then fails on any Deployment or pod that is not
// as it was.
func (c *crs) untouchedSince(t *testing.T, ctx context.Context, before map[string]string) {
	t.Helper()
	c.ready(t)
	time.Sleep(5 * time.Second) // the restarted operator has reconciled everything
	after := c.workloads(t, ctx)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("the upgrade touched %s: %s -> %q", k, v, after[k])
		}
	}
	t.Logf("the CRs' Deployments and pods untouched by the upgrade: %d objects", len(before))
}

// The operator from OperatorHub: config/gitops/operator applied as a user
// applies it (the catalog served from catalog/ on loopback), OLM resolves
// the Subscription, runs the InstallPlan (CRDs, RBAC, CSV, no unpack Job)
// and the CSV Succeeds; the package API lists the channel; the operator,
// running as the ServiceAccount OLM made with the RBAC OLM granted, serves a
// CR of each kind to Ready. Then a v0.2.0 bundle added to the channel is
// offered under Manual approval, waits for the approval, and replaces
// v0.1.0 without touching the CRs' workloads; the CRDs' stored versions stay
// served. Then the operator is uninstalled as OLM documents it (the
// Subscription and the CSV deleted): its Deployment, ServiceAccount and RBAC
// go, its CRDs and the CRs stay.
func TestOLMInstallsUpgradesAndUninstalls(t *testing.T) {
	ctx := context.Background()
	setup(t, filepath.Join(framework.Root(), "bin", "olm", "crds"))
	startOLM(t, ctx)
	stopWatch := watchOLM(t, ctx)
	defer stopWatch()

	// The committed catalog names each bundle's image, which OLM v0 would
	// unpack with a Job kwok cannot run; served without it, OLM v0 installs
	// from the bundle objects the same catalog holds.
	catalog := withBundleImages(t, filepath.Join(framework.Root(), olmgen.CatalogDir), func(string) string { return "" })
	addr := serveCatalog(t, "opm-serve", catalog)
	for _, u := range gitopsOperator(t, addr) {
		if err := olmc.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Logf("applied %s/%s", u.GetKind(), u.GetName())
	}

	// The version the committed catalog's channel head names.
	var head string
	env.Eventually(t, "the package listed", func() error {
		ch, err := packageChannel(ctx)
		if err == nil {
			head = ch
		}
		return err
	})
	t.Logf("PackageManifest %s: %s", olmgen.Package, head)
	first := olmgen.Package + ".v" + strings.TrimSpace(readFile(t, "VERSION"))
	if !strings.Contains(head, "stable:"+first) {
		t.Fatalf("the package's channel head is not %s: %s", first, head)
	}
	sub := &operatorsv1alpha1.Subscription{}
	env.Eventually(t, "Subscription at the latest", func() error {
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: olmgen.Package}, sub); err != nil {
			return err
		}
		if sub.Status.State != operatorsv1alpha1.SubscriptionStateAtLatest || sub.Status.InstalledCSV != first {
			return fmt.Errorf("state %q installed %q", sub.Status.State, sub.Status.InstalledCSV)
		}
		return nil
	})
	csv := csvIn(t, ctx, first, operatorsv1alpha1.CSVPhaseSucceeded)
	ip := &operatorsv1alpha1.InstallPlan{}
	if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: sub.Status.InstallPlanRef.Name}, ip); err != nil {
		t.Fatal(err)
	}
	if len(ip.Status.BundleLookups) > 0 {
		t.Errorf("OLM looked the bundle up for unpacking: %+v", ip.Status.BundleLookups)
	}
	kinds := map[string]int{}
	for _, s := range ip.Status.Plan {
		kinds[s.Resource.Kind]++
	}
	if kinds["CustomResourceDefinition"] != 6 || kinds["ClusterServiceVersion"] != 1 {
		t.Errorf("the InstallPlan's steps: %v", kinds)
	}

	// The operator runs as OLM made it: the CSV Deployment's ServiceAccount.
	runOperator := operatorRunner(t)
	stopOperator := runOperator(csv)
	work := newCRs(t, ctx, "olm-workloads")
	t.Logf("LlamaStackDistribution, TrustyAIService and OGXServer Ready, LMEvalJob Complete, under OLM's RBAC")
	before := work.workloads(t, ctx)

	// Upgrade: v0.2.0 on top of the committed catalog, under Manual approval.
	olmEnv.Update(t, sub, func() { sub.Spec.InstallPlanApproval = operatorsv1alpha1.ApprovalManual })
	second := olmgen.Package + ".v" + upgraded
	catalog2, _ := catalogWithRelease(t, catalog, upgraded)
	addr2 := serveCatalog(t, "opm-serve-"+upgraded, catalog2)
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: sub.Spec.CatalogSource}, cs); err != nil {
		t.Fatal(err)
	}
	olmEnv.Update(t, cs, func() { cs.Spec.Address = addr2 })
	var plan *operatorsv1alpha1.InstallPlan
	env.Eventually(t, "an InstallPlan for "+second+" awaiting approval", func() error {
		ips := &operatorsv1alpha1.InstallPlanList{}
		if err := olmc.List(ctx, ips, client.InNamespace(opNS)); err != nil {
			return err
		}
		for i := range ips.Items {
			if slices.Contains(ips.Items[i].Spec.ClusterServiceVersionNames, second) && ips.Items[i].Status.Phase == operatorsv1alpha1.InstallPlanPhaseRequiresApproval {
				plan = &ips.Items[i]
				return nil
			}
		}
		return fmt.Errorf("%d InstallPlans, none for %s requiring approval", len(ips.Items), second)
	})
	time.Sleep(3 * time.Second) // unapproved, nothing moves
	if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: second}, &operatorsv1alpha1.ClusterServiceVersion{}); !apierrors.IsNotFound(err) {
		t.Fatalf("%s exists before its InstallPlan was approved (%v)", second, err)
	}
	csvIn(t, ctx, first, operatorsv1alpha1.CSVPhaseSucceeded)
	olmEnv.Update(t, plan, func() { plan.Spec.Approved = true })
	csv2 := csvIn(t, ctx, second, operatorsv1alpha1.CSVPhaseSucceeded)
	env.Eventually(t, first+" replaced and deleted", olmEnv.GoneFrom(&operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: first}}))
	// The new version's pod replaces the old one's: the operator restarts.
	stopOperator()
	stopOperator = runOperator(csv2)
	defer func() { stopOperator() }()
	work.untouchedSince(t, ctx, before)
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := olmc.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, crd := range crds.Items {
		if !slices.ContainsFunc(csv2.Spec.CustomResourceDefinitions.Owned, func(d operatorsv1alpha1.CRDDescription) bool { return d.Name == crd.Name }) {
			continue
		}
		owned++
		for _, stored := range crd.Status.StoredVersions {
			if !slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == stored && v.Served }) {
				t.Errorf("CRD %s: stored version %s is no longer served", crd.Name, stored)
			}
		}
	}
	if owned != 6 {
		t.Errorf("%d of the CSV's CRDs installed, want 6 (LlamaStackDistribution, OGXServer, TrustyAIService, LMEvalJob, NemoGuardrails, EvalHub)", owned)
	}
	if ch, err := packageChannel(ctx); err != nil || !strings.Contains(ch, "stable:"+second) {
		t.Errorf("the package after the upgrade: %s (%v)", ch, err)
	}

	// Uninstall as OLM documents it: the Subscription, then the CSV.
	stopOperator()
	stopOperator = func() {}
	roles := olmRoles(t, ctx)
	if len(roles) == 0 {
		t.Fatal("OLM granted the operator no RBAC")
	}
	t.Logf("RBAC OLM granted: %v", slices.Sorted(maps.Keys(roles)))
	deleted := time.Now().Truncate(time.Second)
	if err := olmc.Delete(ctx, sub); err != nil {
		t.Fatal(err)
	}
	// Every CSV of the operator in its namespace, not only the installed
	// one: OLM v0.38.0 can re-run a replaced version's InstallPlan while
	// that version's CSV is being replaced, and the old CSV comes back
	// Succeeded beside the new one (seen in a fresh-clone CI run, issue
	// 52); an administrator uninstalling deletes what `kubectl get csv`
	// lists. The copies OLM makes in other namespaces go with them.
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := olmc.List(ctx, csvs, client.InNamespace(opNS)); err != nil {
		t.Fatal(err)
	}
	for i := range csvs.Items {
		c := &csvs.Items[i]
		if c.Labels["olm.copiedFrom"] != "" {
			continue
		}
		if c.Name != csv2.Name {
			t.Logf("CSV %s (%s) was left beside %s by OLM: deleted with it", c.Name, c.Status.Phase, csv2.Name)
		}
		if err := olmc.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, "the operator's Deployment, ServiceAccount and RBAC gone", func() error {
		dep := csv2.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name
		sa := csv2.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: dep}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Deployment %s: %v", dep, err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: sa}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ServiceAccount %s: %v", sa, err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		var left []string
		for name, created := range olmRoles(t, ctx) {
			// OLM v0.38.0 races with itself here: its CSV finalizer deletes
			// the CSV's cluster RBAC by label while a CSV sync still in
			// flight may re-create a binding it then leaves. What was
			// created after the deletion is that race, not the bundle's; it
			// is logged. Anything older left behind fails.
			if !created.Before(deleted) {
				t.Logf("OLM re-created %s after the CSV's deletion (its own race; left to the administrator)", name)
				continue
			}
			left = append(left, name)
		}
		if len(left) > 0 {
			return fmt.Errorf("RBAC left: %v", left)
		}
		return nil
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(work.llsd), work.llsd); err != nil {
		t.Errorf("the CR after the uninstall: %v", err)
	}
}

// olmRoles are the roles and bindings OLM made for the operator's CSVs
// (labelled olm.owner.kind=ClusterServiceVersion), cluster-wide and in the
// operator's namespace, as kind/[namespace/]name with when each was created.
func olmRoles(t *testing.T, ctx context.Context) map[string]time.Time {
	t.Helper()
	sel := client.MatchingLabels{"olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": opNS}
	out := map[string]time.Time{}
	for kind, l := range map[string]client.ObjectList{"ClusterRole": &rbacv1.ClusterRoleList{}, "ClusterRoleBinding": &rbacv1.ClusterRoleBindingList{},
		"Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{}} {
		if err := olmc.List(ctx, l, sel); err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			m := o.(client.Object)
			out[kind+"/"+strings.TrimPrefix(m.GetNamespace()+"/"+m.GetName(), "/")] = m.GetCreationTimestamp().Time
		}
	}
	return out
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(framework.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// catalogWithRelease is catalog src with one more release: the
// committed bundle/ as version v (its CSV renamed, the image tagged v),
// rendered by operator-registry (bin/opm-render, without a bundle image) as
// `make bundle` renders it, and the channel entry `make catalog` would add
// (replaces the newest, skipRange <v). It returns the catalog's folder and
// the release's bundle folder.
func catalogWithRelease(t *testing.T, src, v string) (catalog, bundle string) {
	t.Helper()
	root := framework.Root()
	bundle = filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(bundle, os.DirFS(filepath.Join(root, "bundle"))); err != nil {
		t.Fatal(err)
	}
	csvFile := filepath.Join(bundle, "manifests", olmgen.Package+".clusterserviceversion.yaml")
	raw, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.TrimSpace(readFile(t, "VERSION"))
	csv := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &csv.Object); err != nil {
		t.Fatal(err)
	}
	csv.SetName(olmgen.Package + ".v" + v)
	ann := csv.GetAnnotations()
	ann["olm.skipRange"] = "<" + v
	ann["containerImage"] = strings.ReplaceAll(ann["containerImage"], ":v"+old, ":v"+v)
	csv.SetAnnotations(ann)
	_ = unstructured.SetNestedField(csv.Object, v, "spec", "version")
	_ = unstructured.SetNestedField(csv.Object, olmgen.Package+".v"+old, "spec", "replaces")
	out, err := yaml.Marshal(csv.Object)
	if err != nil {
		t.Fatal(err)
	}
	out = []byte(strings.ReplaceAll(string(out), "ai-stack-operator:v"+old, "ai-stack-operator:v"+v))
	if err := os.WriteFile(csvFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	render := exec.Command(filepath.Join(root, "bin", "opm-render"), bundle)
	rendered, err := render.Output()
	if err != nil {
		t.Fatalf("opm-render: %v", err)
	}
	cat := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(cat, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(cat, olmgen.Package)
	if err := os.WriteFile(filepath.Join(pkgDir, "bundle-v"+v+".yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(pkgDir, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(index), "\n---\n")
	var added bool
	for i, d := range docs {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		if m["schema"] != "olm.channel" {
			continue
		}
		m["entries"] = append(m["entries"].([]any), map[string]any{"name": olmgen.Package + ".v" + v, "replaces": olmgen.Package + ".v" + old, "skipRange": "<" + v})
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		docs[i], added = string(b), true
	}
	if !added {
		t.Fatal("the catalog has no channel")
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "catalog.yaml"), []byte(strings.Join(docs, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return cat, bundle
}
