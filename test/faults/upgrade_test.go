package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// upgradeFrom is main before the move off Helm 3 (issue 47): the operator
// on helm-operator-plugins' action client, Helm v3.21.0, client-side
// three-way merges.
const upgradeFrom = "a2a9cac"

// An operator upgraded from main a2a9cac carries its releases on and
// replaces nothing. a2a9cac's operator, built from that commit, installs
// every sample of config/samples (every kind) and settles them; then it
// stops and this version starts on the same cluster. Every object of the
// samples' namespace (Deployments, ReplicaSets, pods, Services, claims, the
// CRs themselves: everything listable) and the ClusterRoleBindings made for
// them keep their UID and resourceVersion through several of its reconciles
// of each CR: no pod replaced, no object rewritten. Its writes are release
// records only: the charts' digest changed since (their kubeVersion), so
// each release is upgraded, to a render identical object by object, which
// writes no object (a new revision recorded, the old one superseded). The
// records a2a9cac wrote (Helm 3) are read and carried on, and Helm 4's CLI
// lists each release's history.
func TestUpgradeFromHelm3OperatorReplacesNothing(t *testing.T) {
	ctx := context.Background()
	oldBin, oldDir := buildAt(t, upgradeFrom)
	ns := newNamespace(t, "upgrade")
	samplePrerequisites(t, ns)

	period := "3s"
	old := runOperator(t, "upgrade-old", "", "--watches-file", shortWatches(t, filepath.Join(oldDir, "watches.yaml"), period))
	old.Bin, old.Dir = oldBin, oldDir
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	var crs []*unstructured.Unstructured
	for _, o := range framework.Objects(t, framework.Kustomize(t, "config/samples")) {
		o.SetNamespace(ns)
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GroupVersionKind().Group != "" {
			crs = append(crs, o)
		}
	}
	kinds := map[string]bool{}
	for _, cr := range crs {
		kinds[cr.GetKind()] = true
	}
	if len(kinds) < 6 {
		t.Fatalf("the samples hold %d kinds, not the six: %v", len(kinds), kinds)
	}
	settled(t, ns, crs)
	mustRun(t, old, "the samples settled")
	old.Stop()

	before, beforeCRs := snapshotWithStatus(t, ns)
	t.Logf("%d objects after %s's operator settled the samples", len(before), upgradeFrom)
	records := framework.NewRecords(clientset(t), operatorNamespace)
	releases := map[string]int{}
	stored, err := records.Query(map[string]string{"owner": "helm", "ai-stack-operator.io/owner-namespace": ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range stored {
		if r.Version > releases[r.Name] {
			releases[r.Name] = r.Version
		}
	}
	if len(releases) < 5 {
		t.Fatalf("%s's operator stored %d releases for the samples: %v", upgradeFrom, len(releases), releases)
	}

	next := runOperator(t, "upgrade-new", "", "--watches-file", periodWatches(t, period))
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Uninstalled by the upgraded operator, so that later tests' operators
		// find nothing of this test.
		for _, cr := range crs {
			_ = k8s.Delete(context.Background(), cr)
		}
		framework.Eventually(t, time.Minute, "the samples uninstalled", func() error {
			for _, cr := range crs {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(cr.GroupVersionKind())
				if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cr), u); err == nil {
					return fmt.Errorf("%s %s still there", cr.GetKind(), cr.GetName())
				}
			}
			return nil
		})
	})
	// Each release upgraded once (the chart digest), then several periods.
	// In the full suite the soak's 300 CRs, still there, are reconciled by
	// the new operator as it starts too: one minute was not enough for all.
	framework.Eventually(t, scale(time.Minute, 5*time.Minute), "every release carried on to its next revision", func() error {
		for name, v := range releases {
			rel, err := records.Get(name, v+1)
			if err != nil {
				return fmt.Errorf("%s revision %d: %w", name, v+1, err)
			}
			if rel.Info.Status != "deployed" {
				return fmt.Errorf("%s revision %d is %s: %s", name, v+1, rel.Info.Status, rel.Info.Description)
			}
		}
		return nil
	})
	time.Sleep(5 * 3 * time.Second)
	mustRun(t, next, "five periods after the upgrade")

	after, afterCRs := snapshotWithStatus(t, ns)
	var changed, deliberate []string
	note := func(k, what string) {
		switch {
		case beforeCRs[k] != "" && afterCRs[k] != "":
			// A CR: only its status may change (what the new version
			// says of the same objects).
			if was, now := withoutStatus(t, beforeCRs[k]), withoutStatus(t, afterCRs[k]); was != now {
				changed = append(changed, fmt.Sprintf("%s: %s -> %s", k, was, now))
			} else {
				deliberate = append(deliberate, k+": status "+statusDiff(t, beforeCRs[k], afterCRs[k]))
			}
		case evalHubGrant(k):
			// EvalHub's grants, written outside the chart: renamed since
			// (6f12baf, names that cannot collide), swept by owner UID.
			deliberate = append(deliberate, k+": "+what)
		default:
			changed = append(changed, k+": "+what)
		}
	}
	for k, was := range before {
		if now, ok := after[k]; !ok {
			note(k, "gone")
		} else if now != was {
			note(k, was+" -> "+now)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			note(k, "new")
		}
	}
	sort.Strings(changed)
	sort.Strings(deliberate)
	if len(changed) > 0 {
		t.Errorf("the upgrade changed %d of %d objects (uid/resourceVersion):\n%s", len(changed), len(before), strings.Join(changed, "\n"))
	}
	t.Logf("%d of %d objects unchanged; changed as this version means to (%d):\n%s", len(before)-len(deliberate), len(before), len(deliberate), strings.Join(deliberate, "\n"))

	ws, err := chaos.Writes(cluster.AuditLog, "upgrade-new")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, w := range ws {
		counts[w.Verb+" "+w.Resource+" "+w.Namespace]++
		switch {
		case w.Resource == "configmaps" && w.Namespace == operatorNamespace:
			// Release records.
		case w.Resource == "events" && w.Namespace == ns:
			// The upgrades' events.
		case w.Verb == "patch" && beforeCRs[w.Resource+"."+groupOf(crs, w.Resource)+"/"+w.Name] != "":
			// A CR's status (checked above: nothing else of it changed).
		case evalHubGrant(w.Resource + "." + map[string]string{"rolebindings": "rbac.authorization.k8s.io"}[w.Resource] + "/" + w.Name):
		case w.Namespace == ns || w.Namespace == "":
			t.Errorf("the upgraded operator wrote %s %s %s/%s", w.Verb, w.Resource, w.Namespace, w.Name)
		}
	}
	t.Logf("the upgraded operator's writes: %v", counts)

	// Helm 4's CLI reads the records, Helm 3's and ours.
	helm := filepath.Join(framework.Root(), "bin", "helm")
	kc, err := cluster.UserKubeconfig("upgrade-helm")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range releases {
		cmd := exec.Command(helm, "history", name, "--namespace", operatorNamespace, "--max", "10")
		cmd.Env = append(os.Environ(), "HELM_DRIVER=configmap", "KUBECONFIG="+kc, "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm history %s: %v\n%s", name, err, out)
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s.*\bsuperseded\b`, v)).Match(out) || !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s.*\bdeployed\b.*Upgrade complete`, v+1)).Match(out) {
			t.Errorf("helm history %s does not show revision %d superseded and %d deployed:\n%s", name, v, v+1, out)
		}
	}
	t.Logf("HELM_DRIVER=configmap helm history lists %d releases, each superseded by its upgrade", len(releases))
}

// buildAt builds the operator of a commit of this repository (git archive
// into a temporary directory, then go build as the image builds it) and
// returns the binary and the tree.
func buildAt(t *testing.T, commit string) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	archive := exec.Command("sh", "-c", "git archive --format=tar "+commit+" | tar -x -C "+dir)
	archive.Dir = framework.Root()
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin = filepath.Join(dir, "bin", "manager")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/manager")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build at %s: %v\n%s", commit, err, out)
	}
	t.Logf("built the operator at %s in %s", commit, time.Since(start).Round(time.Second))
	return bin, dir
}

// shortWatches is a copy of a watches file whose kinds reconcile every
// period.
func shortWatches(t *testing.T, path, period string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^(\s*)reconcilePeriod: .*$`).ReplaceAllString(string(b), "${1}reconcilePeriod: "+period)
	if !strings.Contains(s, "reconcilePeriod: "+period) {
		t.Fatalf("%s sets no reconcilePeriod", path)
	}
	out := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// periodWatches is a watches file of the operator's own kinds (its
// registry's) that reconcile every period: settings only, each chart the
// kind's own.
func periodWatches(t *testing.T, period string) string {
	t.Helper()
	d, err := time.ParseDuration(period)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := operator.Watches("")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ws {
		ws[i].Chart, ws[i].ReconcilePeriod = "", &metav1.Duration{Duration: d}
	}
	b, err := yaml.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// samplePrerequisites creates what config/samples refer to, as hack/demo.sh
// does: the NemoGuardrails configuration, and EvalHub's provider and
// collection definitions in the operator's namespace.
func samplePrerequisites(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cms := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nemo-config"}, Data: map[string]string{"config.yaml": "models: []"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "evalhub-provider-lm-evaluation-harness", Labels: map[string]string{
			"trustyai.opendatahub.io/evalhub-provider-type": "system", "trustyai.opendatahub.io/evalhub-provider-name": "lm-evaluation-harness"}},
			Data: map[string]string{"lm_evaluation_harness.yaml": "id: lm_evaluation_harness"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "evalhub-collection-leaderboard-v2", Labels: map[string]string{
			"trustyai.opendatahub.io/evalhub-collection-type": "system", "trustyai.opendatahub.io/evalhub-collection-name": "leaderboard-v2"}},
			Data: map[string]string{"leaderboard-v2.yaml": "id: leaderboard-v2"}},
	}
	for _, cm := range cms {
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	}
}

// bindNew gives every claim of the namespace that has none a static
// volume, as hack/demo.sh does (the local cluster has no provisioner).
func bindNew(t *testing.T, ns string, bound map[string]bool) error {
	t.Helper()
	ctx := context.Background()
	var claims corev1.PersistentVolumeClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, c := range claims.Items {
		if bound[c.Name] {
			continue
		}
		size := c.Spec.Resources.Requests[corev1.ResourceStorage]
		if size.IsZero() {
			size = resource.MustParse("1Gi")
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + c.Name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              ptrString(c.Spec.StorageClassName),
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns + "-" + c.Name}},
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: c.Name},
			},
		}
		if err := k8s.Create(ctx, pv); err != nil {
			return err
		}
		bound[c.Name] = true
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), pv) })
	}
	return nil
}

// conditions are a CR's conditions that are not True, for messages.
func conditions(u *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["status"] != "True" {
			out = append(out, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return strings.Join(out, "; ")
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// settled waits until every CR is Ready (an LMEvalJob: Complete) and its
// status has stopped changing, giving the claims their volumes meanwhile.
func settled(t *testing.T, ns string, crs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	versions := map[string]string{}
	bound := map[string]bool{}
	framework.Eventually(t, 3*time.Minute, "every sample Ready and settled", func() error {
		if err := bindNew(t, ns, bound); err != nil {
			return err
		}
		var waiting []string
		for _, cr := range crs {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(cr.GroupVersionKind())
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: cr.GetName()}, u); err != nil {
				return err
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			state, _, _ := unstructured.NestedString(u.Object, "status", "state")
			key := cr.GetKind() + "/" + cr.GetName()
			switch {
			case cr.GetKind() == "LMEvalJob" && state != "Complete":
				waiting = append(waiting, key+" state "+state)
			case cr.GetKind() != "LMEvalJob" && phase != "Ready":
				waiting = append(waiting, key+" phase "+phase+" ("+conditions(u)+")")
			case versions[key] != u.GetResourceVersion():
				versions[key] = u.GetResourceVersion()
				waiting = append(waiting, key+" still changing")
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("%s", strings.Join(waiting, ", "))
		}
		return nil
	})
}

// snapshotWithStatus is "resource/name" -> "uid@resourceVersion" of every
// object of the namespace a list reaches (events and leases aside: they are
// the components' own), and of the ClusterRoleBindings made for it; and the
// custom resources' spec and status as JSON by the same keys.
func snapshotWithStatus(t *testing.T, ns string) (map[string]string, map[string]string) {
	t.Helper()
	statuses := map[string]string{}
	ctx := context.Background()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	add := func(gvr schema.GroupVersionResource, items []unstructured.Unstructured) {
		for _, i := range items {
			key := gvr.Resource + "." + gvr.Group + "/" + i.GetName()
			out[key] = string(i.GetUID()) + "@" + i.GetResourceVersion()
			if strings.Contains(gvr.Group, ".") && !strings.HasSuffix(gvr.Group, ".k8s.io") {
				b, _ := json.Marshal(map[string]any{"generation": i.GetGeneration(), "labels": i.GetLabels(), "annotations": i.GetAnnotations(), "finalizers": i.GetFinalizers(), "spec": i.Object["spec"], "status": i.Object["status"]})
				statuses[key] = string(b)
			}
		}
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			switch {
			case r.Name == "events" || r.Name == "leases":
				continue
			case r.Namespaced:
				got, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatalf("list %s: %v", gvr, err)
				}
				add(gvr, got.Items)
			case r.Name == "clusterrolebindings":
				got, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: "trustyai.opendatahub.io/owner-namespace=" + ns})
				if err != nil {
					t.Fatalf("list %s: %v", gvr, err)
				}
				add(gvr, got.Items)
			}
		}
	}
	return out, statuses
}

// evalHubGrant says whether a snapshot key names one of EvalHub's grants:
// its RoleBindings and its jobs' ServiceAccount.
func evalHubGrant(key string) bool {
	return strings.HasPrefix(key, "rolebindings.rbac.authorization.k8s.io/evalhub") ||
		strings.HasPrefix(key, "serviceaccounts./evalhub-") && strings.HasSuffix(key, "-job")
}

// groupOf is the API group of the CRs' resource (plural), for audit records.
func groupOf(crs []*unstructured.Unstructured, resource string) string {
	for _, cr := range crs {
		if strings.ToLower(cr.GetKind())+"s" == resource || strings.ToLower(cr.GetKind()) == resource {
			return cr.GroupVersionKind().Group
		}
	}
	return ""
}

// withoutStatus is a CR's JSON (snapshotWithStatus) without its status.
func withoutStatus(t *testing.T, doc string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	b, _ := json.Marshal(m)
	return string(b)
}

// statusDiff names the status fields that differ between two CR JSONs.
func statusDiff(t *testing.T, was, now string) string {
	t.Helper()
	var a, b map[string]any
	if err := json.Unmarshal([]byte(was), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(now), &b); err != nil {
		t.Fatal(err)
	}
	sa, _ := a["status"].(map[string]any)
	sb, _ := b["status"].(map[string]any)
	var fields []string
	for k := range sa {
		ja, _ := json.Marshal(sa[k])
		jb, _ := json.Marshal(sb[k])
		if string(ja) != string(jb) {
			fields = append(fields, k+": "+string(ja)+" -> "+string(jb))
		}
	}
	for k := range sb {
		if _, ok := sa[k]; !ok {
			jb, _ := json.Marshal(sb[k])
			fields = append(fields, k+": (none) -> "+string(jb))
		}
	}
	sort.Strings(fields)
	return strings.Join(fields, "; ")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
