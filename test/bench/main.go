// Command bench measures the operator on a local control plane and prints one
// table (`make bench`): (i) its RSS with 100 CRs, before and after 10,000
// unrelated 10 KiB ConfigMaps and 1,000 unrelated Secrets appear; (ii) the
// latency from an update of a referenced, unlabelled ConfigMap to the new
// hash on the Deployment, over 50 updates; (iii) the writes and reads it
// sends in two idle minutes with 100 CRs; (iv) the time to reconcile 100 new
// CRs to their Deployments, against the API server's floor for as many
// writes and against the replay of the objects the operator made; (v) their
// writes and reads per CR, (vi) the reconcile's phases, and (vii) the same up
// to 1,000 CRs. The operator runs as its own process (bin/manager), so its
// RSS is its own; its writes are read from its client metrics. One CR in a
// namespace of its own is reconciled first (-warmup), so that the first
// batch leaves out the process's start.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/evalhub"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/nemoguardrails"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/trustyai"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust/trusttest"
	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

type options struct {
	crs, scale, configMaps, secrets, updates int
	idle, profileWindow                      time.Duration
	manager, root, kind                      string
	cpuprofile, trace, heapprofile, log      string
	audit, apiserverProfile                  string
	peer                                     string
	workloads, warmup                        bool
}

func main() {
	o := options{}
	flag.IntVar(&o.crs, "crs", 100, "CRs of -kind to create")
	flag.IntVar(&o.scale, "scale", 1000, "after the other figures, create CRs up to this many for the scaling rows (0 or at most -crs: none)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write the operator's CPU profile while it creates the first -crs CRs to this file (go tool pprof)")
	flag.StringVar(&o.trace, "trace", "", "write the operator's execution trace while it creates the first -crs CRs to this file (go tool trace)")
	flag.StringVar(&o.apiserverProfile, "apiserver-cpuprofile", "", "write kube-apiserver's CPU profile over the same window as -cpuprofile to this file")
	flag.StringVar(&o.heapprofile, "heapprofile", "", "write the operator's heap profile (after a GC) to this file when the RSS with -crs CRs idle is read (go tool pprof -sample_index=inuse_space)")
	flag.StringVar(&o.log, "log", "", "keep the operator's log in this file")
	flag.StringVar(&o.audit, "audit", "", "keep the API server's audit log of writes (JSON lines; leases aside) in this file: which object each write was about. Logging costs the API server time: the figures of such a run are not comparable")
	flag.DurationVar(&o.profileWindow, "profile-window", 10*time.Second, "how long -cpuprofile and -trace record, from the first create")
	flag.IntVar(&o.configMaps, "configmaps", 10000, "unrelated 10 KiB ConfigMaps to add")
	flag.IntVar(&o.secrets, "secrets", 1000, "unrelated Secrets to add")
	flag.IntVar(&o.updates, "updates", 50, "updates of a referenced ConfigMap for the latency figure")
	flag.DurationVar(&o.idle, "idle", 2*time.Minute, "idle window in which writes are counted")
	flag.StringVar(&o.manager, "manager", "bin/manager", "the operator binary")
	flag.StringVar(&o.kind, "kind", "LlamaStackDistribution", "the kind to create: LlamaStackDistribution, OGXServer, TrustyAIService, NemoGuardrails, EvalHub or LMEvalJob (a preview kind: jobs to Complete, writes and reads per job, idle, RSS)")
	flag.StringVar(&o.root, "root", ".", "repository root (CRDs)")
	flag.BoolVar(&o.warmup, "warmup", true, "reconcile one CR in a namespace of its own before the figures: the first batch's time per CR then leaves out the process's one-time start (lazy discovery, first connections, the first heap growth)")
	flag.StringVar(&o.peer, "peer", "", "another operator's binary serving -kind (the upstream one, built by you; it runs in its directory, laid out as its image is): run first on the same fresh cluster with -crs CRs of its own, for its rows beside the operator's (time to Deployments, CPU, writes and reads per CR, RSS after the same idle, binary size)")
	flag.BoolVar(&o.workloads, "workloads", false, "run the local cluster's controllers, scheduler and simulated nodes too (the write and memory figures are defined without them)")
	flag.Parse()
	bench := run
	if o.kind == "LMEvalJob" {
		bench = runJobs // a run-to-completion kind: its own figures
	}
	if err := bench(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

type row struct{ metric, value, target, verdict string }

func run(o options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lc, err := localcluster.Start(ctx, localcluster.Options{
		Dir: filepath.Join(dir, "cluster"), CRDDirs: []string{filepath.Join(o.root, "config", "crd", "bases")}, WithoutWorkloads: !o.workloads, Audit: o.audit != "",
	})
	if err != nil {
		return err
	}
	defer lc.Stop() //nolint:errcheck
	if o.audit != "" {
		defer func() {
			if err := copyFile(lc.AuditLog, o.audit); err != nil {
				fmt.Fprintf(os.Stderr, "bench: keep the audit log: %v\n", err)
			}
		}()
	}
	cfg, kubeconfig := lc.Config, lc.Kubeconfig
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ai-stack-operator-system"}}); err != nil {
		return err
	}
	var peerRows []row
	var peerResult *peerRun
	if o.peer != "" {
		if peerResult, err = runPeer(ctx, o, dir, kubeconfig, c, md); err != nil {
			return fmt.Errorf("peer %s: %w", o.peer, err)
		}
	}
	pprofPort, err := freePort()
	if err != nil {
		return err
	}
	// net/http/pprof only when a profile is asked for: the operator runs as
	// it is deployed (pprof off, and with it the heap profiler's records).
	var pprofArgs []string
	if o.cpuprofile != "" || o.trace != "" || o.heapprofile != "" {
		pprofArgs = []string{"--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", pprofPort)}
	}
	mgr, metricsURL, err := startOperator(o, dir, kubeconfig, pprofArgs...)
	if err != nil {
		return err
	}
	defer func() { _ = mgr.Process.Kill(); _, _ = mgr.Process.Wait() }()

	for _, ns := range []string{"bench", "noise"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	k, err := benchKindOf(o.kind)
	if err != nil {
		return err
	}
	// One CR reads a ConfigMap: the latency subject.
	subject, err := k.subject(0)
	if err != nil {
		return err
	}
	if cr := k.subjectCR; cr != nil {
		// Its namespace, its ConfigMap, then the CR, reconciled.
		for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cr.GetNamespace()}}, subject, cr} {
			if err := c.Create(ctx, o); err != nil {
				return err
			}
		}
		if err := reconciled(ctx, c, k, cr); err != nil {
			return fmt.Errorf("the latency subject: %w", err)
		}
	} else if err := c.Create(ctx, subject); err != nil {
		return err
	}
	if k.shared != nil {
		cm, err := k.shared(0)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, cm); err != nil {
			return err
		}
	}

	if o.warmup {
		if err := warmUp(ctx, c, k); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}

	// (iv) 100 new CRs to their Deployments; (v) the writes they cost and
	// (vi) where the reconciles spend their time.
	createWrites, err := writes(metricsURL)
	if err != nil {
		return err
	}
	createReads, err := requests(metricsURL, "GET")
	if err != nil {
		return err
	}
	createPhases, err := phases(metricsURL, o.kind)
	if err != nil {
		return err
	}
	profiles := profile(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pprofPort), cfg, o)
	cpuBefore, err := descendantsCPU()
	if err != nil {
		return err
	}
	reconcile100, err := createBatch(ctx, c, md, k, 0, o.crs)
	if err != nil {
		return err
	}
	cpuAfter, err := descendantsCPU()
	if err != nil {
		return err
	}
	cpu100 := cpuAfter.since(cpuBefore)
	if err := <-profiles; err != nil {
		return err
	}
	// Let the status writes that follow the installs settle.
	if err := waitFor(5*time.Minute, func() error { return allObserved(ctx, c, k, o.crs) }); err != nil {
		return err
	}
	time.Sleep(10 * time.Second)

	// (iii) writes in the idle window, and (i) RSS at its end.
	before, err := writes(metricsURL)
	if err != nil {
		return err
	}
	refused, err := refusedWrites(metricsURL)
	if err != nil {
		return err
	}
	// The API server's floor for the batch's writes, in the same state: the
	// same number of small creates, 16 at a time.
	writes100 := before - createWrites
	floor100, err := floor(ctx, c, metricsURL, "floor", writes100)
	if err != nil {
		return err
	}
	floorRatio := reconcile100.Seconds() / floor100.Seconds()
	// The replay floor: the objects the operator made for the batch,
	// re-created by a plain client with the same concurrency into fresh
	// namespaces.
	replayN, replay100, err := replayFloor(ctx, c, "bench", "replay")
	if err != nil {
		return fmt.Errorf("replay floor: %w", err)
	}
	replayRatio := reconcile100.Seconds() / replay100.Seconds()
	fmt.Fprintf(os.Stderr, "bench: %d CRs reconciled in %s; idling %s\n", o.crs, reconcile100.Round(time.Millisecond), o.idle)
	reads, err := requests(metricsURL, "GET")
	if err != nil {
		return err
	}
	time.Sleep(o.idle)
	after, err := writes(metricsURL)
	if err != nil {
		return err
	}
	idleWrites := after - before
	readsAfter, err := requests(metricsURL, "GET")
	if err != nil {
		return err
	}
	idleReads := readsAfter - reads
	readsPerCR := float64(reads-createReads) / float64(o.crs)
	perCR := float64(before-createWrites) / float64(o.crs)
	objects, err := managedObjects(ctx, c)
	if err != nil {
		return err
	}
	perCRObjects := float64(objects) / float64(o.crs)
	split, err := phases(metricsURL, o.kind)
	if err != nil {
		return err
	}
	rssIdle, err := chaos.RSS(mgr.Process.Pid)
	if err != nil {
		return err
	}
	split100 := rssSplit(mgr.Process.Pid)
	if o.heapprofile != "" {
		if err := saveURL(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", pprofPort), o.heapprofile); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
	}

	// (i) unrelated ConfigMaps and Secrets.
	fmt.Fprintf(os.Stderr, "bench: adding %d ConfigMaps and %d Secrets\n", o.configMaps, o.secrets)
	payload := strings.Repeat("x", 10*1024)
	if err := parallel(o.configMaps, 16, func(i int) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "noise", Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"blob": payload}})
	}); err != nil {
		return err
	}
	if err := parallel(o.secrets, 16, func(i int) error {
		return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "noise", Name: fmt.Sprintf("secret-%04d", i)}, StringData: map[string]string{"token": payload[:1024]}})
	}); err != nil {
		return err
	}
	// The operator hands a burst's heap back once it has been quiet for
	// memlimit.IdleInterval, at its next look: the settled RSS is the
	// smallest of six readings, 5 s apart, from 15 s after the last create.
	time.Sleep(15 * time.Second)
	var rssNoise int64
	for i := 0; i < 6; i++ {
		if i > 0 {
			time.Sleep(5 * time.Second)
		}
		rss, err := chaos.RSS(mgr.Process.Pid)
		if err != nil {
			return err
		}
		if rssNoise == 0 || rss < rssNoise {
			rssNoise = rss
		}
	}

	// (ii) latency from a ConfigMap update to the new hash on the Deployment.
	fmt.Fprintf(os.Stderr, "bench: %d updates of a referenced ConfigMap\n", o.updates)
	var lat []time.Duration
	for i := 1; i <= o.updates; i++ {
		next, err := k.subject(i)
		if err != nil {
			return err
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(next), cm); err != nil {
			return err
		}
		cm.Data = next.Data
		want := k.hash(cm)
		t0 := time.Now()
		if err := c.Update(ctx, cm); err != nil {
			return err
		}
		if err := waitForEvery(30*time.Second, 5*time.Millisecond, func() error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: subject.Namespace, Name: k.deployment}, d); err != nil {
				return err
			}
			if got := d.Spec.Template.Annotations[k.annotation]; got != want {
				return fmt.Errorf("hash %s", got)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("update %d: %w", i, err)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	var sharedRows []row
	if k.shared != nil {
		took, err := sharedEdit(ctx, c, k, o.crs)
		if err != nil {
			return err
		}
		sharedRows = append(sharedRows, row{fmt.Sprintf("(ii) an edit of the ConfigMap all %d %s read -> all their Deployments rolled", o.crs, plural(o.kind)), took.Round(time.Millisecond).String(), "", ""})
	}

	// (vii) scaling: CRs up to -scale, their time and writes per CR, RSS.
	var scaleRows []row
	writesScale, perCRScale := 0, 0.0
	if o.scale > o.crs {
		n := o.scale - o.crs
		fmt.Fprintf(os.Stderr, "bench: creating %d more CRs\n", n)
		// The latency loop's last upgrade writes its release records and
		// event after the Deployment carries the new hash (the audit log
		// showed them 20 ms later, counted with this batch): let it settle.
		time.Sleep(10 * time.Second)
		w0, err := writes(metricsURL)
		if err != nil {
			return err
		}
		took, err := createBatch(ctx, c, md, k, o.crs, o.scale)
		if err != nil {
			return err
		}
		if err := waitFor(10*time.Minute, func() error { return allObserved(ctx, c, k, o.scale) }); err != nil {
			return err
		}
		time.Sleep(10 * time.Second)
		w1, err := writes(metricsURL)
		if err != nil {
			return err
		}
		writesScale, perCRScale = w1-w0, float64(w1-w0)/float64(n)
		refusedScale, err := refusedWrites(metricsURL)
		if err != nil {
			return err
		}
		refusedScale -= refused
		fmt.Fprintf(os.Stderr, "bench: refused writes so far:\n%s\n", refusedByCode(metricsURL))
		floorScale, err := floor(ctx, c, metricsURL, "floor-scale", writesScale)
		if err != nil {
			return err
		}
		time.Sleep(o.idle)
		rssScale, err := chaos.RSS(mgr.Process.Pid)
		if err != nil {
			return err
		}
		cost100, costScale := reconcile100.Seconds()/float64(o.crs), took.Seconds()/float64(n)
		change := costScale/cost100 - 1
		scaleRows = []row{
			{fmt.Sprintf("(vii) %d more CRs -> Deployments (%d in all)", n, o.scale), took.Round(time.Millisecond).String(), "", ""},
			{fmt.Sprintf("(vii) writes per new %s, CRs %d-%d", o.kind, o.crs+1, o.scale), fmt.Sprintf("%.3f (%d writes for %d CRs; %d refused)", perCRScale, writesScale, n, refusedScale), fmt.Sprintf("<= %.0f (objects + 3)", perCRObjects+3), verdict(perCRScale <= perCRObjects+3)},
			{fmt.Sprintf("(vii) time per CR, first %d vs next %d", o.crs, n), fmt.Sprintf("%.1f ms vs %.1f ms (%+.0f%%)", 1000*cost100, 1000*costScale, 100*change), "within +-20%", verdict(change >= -0.2 && change <= 0.2)},
			{fmt.Sprintf("(vii) RSS, %d CRs idle (noise objects still there)", o.scale), fmt.Sprintf("%s (%.2fx the RSS at %d)", mib(rssScale), float64(rssScale)/float64(rssIdle), o.crs), "<= 2x", verdict(float64(rssScale) <= 2*float64(rssIdle))},
		}
		r := took.Seconds() / floorScale.Seconds()
		scaleRows = append(scaleRows, row{fmt.Sprintf("(vii) %d more CRs vs the API server's floor for their %d writes", n, writesScale), fmt.Sprintf("%.2fx (floor %s)", r, floorScale.Round(time.Millisecond)), "<= 2x", verdict(r <= 2)})
	}

	ratio := float64(rssNoise) / float64(rssIdle)
	rows := []row{
		{fmt.Sprintf("(i) RSS, %d %s idle", o.crs, plural(o.kind)), fmt.Sprintf("%s (%s)", mib(rssIdle), split100), "<= 56 MiB", verdict(rssIdle <= 56<<20)},
		{fmt.Sprintf("(i) RSS, + %d ConfigMaps (10 KiB) and %d Secrets", o.configMaps, o.secrets), fmt.Sprintf("%s (%.3fx)", mib(rssNoise), ratio), "<= 1.15x", verdict(ratio <= 1.15)},
		{fmt.Sprintf("(ii) ConfigMap update -> new hash, p50 over %d", o.updates), ms(p50), "< 1 s", verdict(p50 < time.Second)},
		{fmt.Sprintf("(ii) ConfigMap update -> new hash, p99 over %d", o.updates), ms(p99), "< 3 s", verdict(p99 < 3*time.Second)},
	}
	rows = append(rows, sharedRows...)
	rows = append(rows, []row{
		{fmt.Sprintf("(iii) writes in %s idle, %d CRs", o.idle, o.crs), strconv.Itoa(idleWrites), "0", verdict(idleWrites == 0)},
		{fmt.Sprintf("(iii) reads in %s idle, %d CRs", o.idle, o.crs), strconv.Itoa(idleReads), "0", verdict(idleReads == 0)},
		{fmt.Sprintf("(iv) %d new CRs -> Deployments", o.crs), reconcile100.Round(time.Millisecond).String(), "", ""},
		{fmt.Sprintf("(iv) the same vs the API server's floor for their %d writes", writes100), fmt.Sprintf("%.2fx (floor %s, %.0f writes/s)", floorRatio, floor100.Round(time.Millisecond), float64(writes100)/floor100.Seconds()), "<= 2x", verdict(floorRatio <= 2)},
		{fmt.Sprintf("(iv) the same vs the replay floor: its %d objects (%.1f per CR) re-created, 16 at a time", replayN, float64(replayN)/float64(o.crs)), fmt.Sprintf("%.2fx (floor %s)", replayRatio, replay100.Round(time.Millisecond)), "<= 2.5x", verdict(replayRatio <= 2.5)},
		{"(iv) CPU while creating them", fmt.Sprintf("%s; the machine had %d cores x %s = %.2f s", cpu100.describe(), goruntime.NumCPU(), reconcile100.Round(time.Millisecond), float64(goruntime.NumCPU())*reconcile100.Seconds()), "", ""},
		{fmt.Sprintf("(v) writes per new %s (events included)", o.kind), fmt.Sprintf("%.2f (%.1f objects; %d refused)", perCR, perCRObjects, refused), fmt.Sprintf("<= %.0f (objects + 3)", perCRObjects+3), verdict(perCR <= perCRObjects+3)},
		{fmt.Sprintf("(v) reads per new %s (watches aside)", o.kind), fmt.Sprintf("%.1f", readsPerCR), "", ""},
		{"(vi) reconcile time while creating, per phase", phaseSplit(createPhases, split), "", ""},
	}...)
	rows = append(rows, scaleRows...)
	if peerResult != nil {
		peerRows = peerResult.rows(o, rssIdle, reconcile100, replay100, perCR, readsPerCR, idleWrites, idleReads)
		rows = append(rows, peerRows...)
	}
	printTable(rows)
	return nil
}

// startOperator runs the operator's binary against the cluster of
// kubeconfig, with its log in -log (else in dir), plain HTTP metrics (the
// write figures come from its own client metrics, which would otherwise
// count the TokenReviews and SubjectAccessReviews each authenticated scrape
// makes it send) and extra flags, and waits for its metrics.
func startOperator(o options, dir, kubeconfig string, extra ...string) (*exec.Cmd, string, error) {
	logPath := o.log
	if logPath == "" {
		logPath = filepath.Join(dir, "manager.log")
	}
	return startProcess(exec.Command(o.manager), kubeconfig, logPath, func(metricsAddr string) []string {
		return append([]string{"run", "--operator-namespace", "ai-stack-operator-system", "--metrics-insecure",
			"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0"}, extra...)
	})
}

// startProcess starts an operator (cmd, its arguments given the metrics
// address to bind) against the cluster of kubeconfig, its output in
// logPath, and returns once its metrics answer, with their URL.
func startProcess(cmd *exec.Cmd, kubeconfig, logPath string, args func(metricsAddr string) []string) (*exec.Cmd, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	defer logFile.Close()
	cmd.Args = append(cmd.Args[:1], args(fmt.Sprintf("127.0.0.1:%d", port))...)
	cmd.Env = append(append(os.Environ(), cmd.Env...), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	if err := waitFor(30*time.Second, func() error { _, err := writes(metricsURL); return err }); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return nil, "", fmt.Errorf("the metrics of %s did not come up: %w; the end of its log:\n%s", cmd.Path, err, tail(logPath, 20))
	}
	return cmd, metricsURL, nil
}

// createBatch creates CRs from to to (8 at a time) and returns the time
// until all their Deployments exist. It watches for them rather than polling
// a list: a list of n Deployments costs the API server (and this process)
// more the more there are, on the cores the operator and the API server
// need, and so would weigh on the very time it measures, more at 1,000 CRs
// than at 100.
func createBatch(ctx context.Context, c client.Client, md metadata.Interface, k benchKind, from, to int) (time.Duration, error) {
	return createBatchIn(ctx, c, md, k, "bench", from, to)
}

// createBatchIn is createBatch in namespace ns.
func createBatchIn(ctx context.Context, c client.Client, md metadata.Interface, k benchKind, ns string, from, to int) (time.Duration, error) {
	deployments := md.Resource(appsv1.SchemeGroupVersion.WithResource("deployments")).Namespace(ns)
	seen := map[string]bool{}
	watchFrom := func() (watch.Interface, error) {
		list, err := deployments.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, d := range list.Items {
			seen[d.Name] = true
		}
		return deployments.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	}
	w, err := watchFrom()
	if err != nil {
		return 0, err
	}
	defer func() { w.Stop() }()
	start := time.Now()
	created := make(chan error, 1)
	go func() {
		created <- parallel(to-from, 8, func(i int) error {
			cr := k.cr(from + i)
			cr.SetNamespace(ns)
			return c.Create(ctx, cr)
		})
	}()
	giveUp := time.After(20 * time.Minute)
	for len(seen) < to {
		select {
		case ev, ok := <-w.ResultChan():
			switch {
			case !ok:
				// The API server ended the watch: list again, watch on.
				if w, err = watchFrom(); err != nil {
					return 0, err
				}
			case ev.Type == watch.Error:
				return 0, apierrors.FromObject(ev.Object)
			case ev.Type == watch.Added:
				if m, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
					seen[m.Name] = true
				}
			}
		case err := <-created:
			if err != nil {
				return 0, err
			}
			created = nil
		case <-giveUp:
			return 0, fmt.Errorf("gave up after 20m: %d of %d Deployments", len(seen), to)
		}
	}
	took := time.Since(start)
	if created != nil {
		if err := <-created; err != nil {
			return 0, err
		}
	}
	return took, nil
}

// warmUp reconciles one CR of the kind in namespace warmup, which it keeps
// (the figures count namespace bench only).
func warmUp(ctx context.Context, c client.Client, k benchKind) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "warmup"}}); err != nil {
		return err
	}
	cr := k.cr(1)
	cr.SetNamespace("warmup")
	if err := c.Create(ctx, cr); err != nil {
		return err
	}
	return reconciled(ctx, c, k, cr)
}

// sharedEdit edits the ConfigMap every CR of namespace bench reads and
// returns the time until all n Deployments carry its new hash.
func sharedEdit(ctx context.Context, c client.Client, k benchKind, n int) (time.Duration, error) {
	next, err := k.shared(1)
	if err != nil {
		return 0, err
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(next), cm); err != nil {
		return 0, err
	}
	cm.Data = next.Data
	want := k.hash(cm)
	fmt.Fprintf(os.Stderr, "bench: one edit of ConfigMap %s, which all %d CRs read\n", cm.Name, n)
	t0 := time.Now()
	if err := c.Update(ctx, cm); err != nil {
		return 0, err
	}
	err = waitForEvery(10*time.Minute, 100*time.Millisecond, func() error {
		list := &appsv1.DeploymentList{}
		if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
			return err
		}
		rolled := 0
		for _, d := range list.Items {
			if d.Spec.Template.Annotations[k.annotation] == want {
				rolled++
			}
		}
		if rolled < n {
			return fmt.Errorf("%d of %d Deployments rolled", rolled, n)
		}
		return nil
	})
	return time.Since(t0), err
}

// reconciled waits until cr (created) has a status at its generation and
// its namespace a Deployment, and lets its last status write settle.
func reconciled(ctx context.Context, c client.Client, k benchKind, cr client.Object) error {
	err := waitFor(2*time.Minute, func() error {
		got := cr.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(cr), got); err != nil {
			return err
		}
		if !k.observed(got) {
			return fmt.Errorf("%s has no status at its generation", cr.GetName())
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
		if err := c.List(ctx, list, client.InNamespace(cr.GetNamespace())); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return errors.New("no Deployment yet")
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	return err
}

// floor is how long the API server takes to accept n small creates, 16 at
// a time, in namespaces ns-1 to ns-3 (created here): the least time n writes
// can take. It is measured once the operator has been quiet for 2 s (the
// reconciles that follow a batch, which the batch's time leaves out, would
// otherwise slow it), three times, and the fastest counts: measured once
// right after a batch, it moved between 460 ms and 1.04 s for the same 800
// writes.
func floor(ctx context.Context, c client.Client, metricsURL, ns string, n int) (time.Duration, error) {
	if err := quiet(metricsURL, 2*time.Second, time.Minute); err != nil {
		return 0, err
	}
	best := time.Duration(0)
	for round := 1; round <= 3; round++ {
		name := fmt.Sprintf("%s-%d", ns, round)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return 0, err
		}
		start := time.Now()
		err := parallel(n, 16, func(i int) error {
			return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: fmt.Sprintf("w-%05d", i)}, Data: map[string]string{"k": "v"}})
		})
		if err != nil {
			return 0, err
		}
		if took := time.Since(start); best == 0 || took < best {
			best = took
		}
	}
	return best, nil
}

// replayFloor re-creates, with a plain client and 16 at a time, the objects
// the operator made in namespace from (those labelled as its: the release's
// and what the kinds write beside it), into a fresh namespace per round;
// the fastest of three rounds, and how many objects.
func replayFloor(ctx context.Context, c client.Client, from, ns string) (int, time.Duration, error) {
	var objs []client.Object
	for _, l := range namespacedLists() {
		if err := c.List(ctx, l, client.InNamespace(from), client.MatchingLabels{release.LabelManaged: "true"}); err != nil {
			return 0, 0, err
		}
		if err := meta.EachListItem(l, func(o runtime.Object) error {
			obj := o.(client.Object)
			obj.SetResourceVersion("")
			obj.SetUID("")
			obj.SetOwnerReferences(nil)
			obj.SetManagedFields(nil)
			obj.SetCreationTimestamp(metav1.Time{})
			obj.SetGeneration(0)
			// Not the operator's: its caches (label-limited) stay as they
			// are for the RSS rows.
			labels := obj.GetLabels()
			delete(labels, release.LabelManaged)
			obj.SetLabels(labels)
			if d, ok := obj.(*appsv1.Deployment); ok {
				d.Status = appsv1.DeploymentStatus{}
			}
			if s, ok := obj.(*corev1.Service); ok {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
			}
			objs = append(objs, obj)
			return nil
		}); err != nil {
			return 0, 0, err
		}
	}
	best := time.Duration(0)
	for round := 1; round <= 3; round++ {
		name := fmt.Sprintf("%s-%d", ns, round)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return 0, 0, err
		}
		copies := make([]client.Object, len(objs))
		for i, o := range objs {
			copies[i] = o.DeepCopyObject().(client.Object)
			copies[i].SetNamespace(name)
		}
		start := time.Now()
		if err := parallel(len(copies), 16, func(i int) error { return c.Create(ctx, copies[i]) }); err != nil {
			return 0, 0, err
		}
		if took := time.Since(start); best == 0 || took < best {
			best = took
		}
	}
	return len(objs), best, nil
}

// quiet waits until the operator has sent no request for the window (its
// client metrics), for at most limit.
func quiet(metricsURL string, window, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last, err := requests(metricsURL, "GET", "POST", "PUT", "PATCH", "DELETE")
	if err != nil {
		return err
	}
	for {
		time.Sleep(window)
		n, err := requests(metricsURL, "GET", "POST", "PUT", "PATCH", "DELETE")
		if err != nil {
			return err
		}
		if n == last {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the operator still sends requests %s after the batch", limit)
		}
		last = n
	}
}

// profile records the operator's CPU profile and execution trace and the
// API server's CPU profile, as asked, for the profile window; the channel
// gives the outcome.
func profile(base string, apiserver *rest.Config, o options) <-chan error {
	out := make(chan error, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	fetch := func(hc *http.Client, base, path, file string) {
		defer wg.Done()
		err := saveURL(hc, fmt.Sprintf("%s/%s?seconds=%d", base, path, int(o.profileWindow.Seconds())), file)
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	if o.cpuprofile != "" {
		wg.Add(1)
		go fetch(http.DefaultClient, base, "profile", o.cpuprofile)
	}
	if o.trace != "" {
		wg.Add(1)
		go fetch(http.DefaultClient, base, "trace", o.trace)
	}
	if o.apiserverProfile != "" {
		// The admin's client certificate may read the API server's
		// /debug/pprof (on by default, --profiling).
		hc, err := rest.HTTPClientFor(apiserver)
		if err != nil {
			out <- err
			return out
		}
		wg.Add(1)
		go fetch(hc, strings.TrimSuffix(apiserver.Host, "/")+"/debug/pprof", "profile", o.apiserverProfile)
	}
	go func() { wg.Wait(); out <- first }()
	return out
}

// rssSplit is a process's resident memory by kind: anonymous (heap, stacks)
// and file-backed (the binary's pages).
func rssSplit(pid int) string {
	m, err := chaos.ReadMemory(pid)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("anon %s, file %s", mib(m.Anon), mib(m.File))
}

func allObserved(ctx context.Context, c client.Client, k benchKind, n int) error {
	list := k.list()
	if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
		return err
	}
	done := 0
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if k.observed(o) {
			done++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if done < n {
		return fmt.Errorf("%d of %d CRs have a status at their generation that is not Failed", done, n)
	}
	return nil
}

// benchKind is what the bench creates and measures for a kind.
type benchKind struct {
	cr func(i int) client.Object
	// subject is the ConfigMap one CR reads, in its i-th content: CR 0 of
	// the batch, or subjectCR when set (created with it, in its namespace).
	subject   func(i int) (*corev1.ConfigMap, error)
	subjectCR client.Object
	// shared, when set, is a ConfigMap every CR of the batch reads, in its
	// i-th content: one edit of it is timed until all have rolled.
	shared func(i int) (*corev1.ConfigMap, error)
	// hash is the pod-template annotation the subject's content gives, on
	// Deployment deployment under annotation.
	hash                   func(*corev1.ConfigMap) string
	deployment, annotation string
	list                   func() client.ObjectList
	observed               func(runtime.Object) bool
}

func benchKindOf(kind string) (benchKind, error) {
	switch kind {
	case "LlamaStackDistribution":
		return benchKind{
			cr: func(i int) client.Object {
				cr := &llamav1alpha1.LlamaStackDistribution{
					ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("llsd-%03d", i)},
					Spec: llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{
						Distribution: llamav1alpha1.DistributionType{Name: "starter"},
					}},
				}
				if i == 0 {
					cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run-0"}
				}
				return cr
			},
			subject: func(i int) (*corev1.ConfigMap, error) {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "run-0"}, Data: map[string]string{"config.yaml": fmt.Sprintf("version: 2\n# %d\n", i)}}, nil
			},
			hash:       func(cm *corev1.ConfigMap) string { return trust.ContentHash(cm.Data, nil) },
			deployment: "llsd-000", annotation: llamastack.AnnotationUserConfigHash,
			list: func() client.ObjectList { return &llamav1alpha1.LlamaStackDistributionList{} },
			observed: func(o runtime.Object) bool {
				cr := o.(*llamav1alpha1.LlamaStackDistribution)
				return cr.Status.ObservedGeneration == cr.Generation && cr.Status.Phase != "" && cr.Status.Phase != llamav1alpha1.PhaseFailed
			},
		}, nil
	case "OGXServer":
		return benchKind{
			cr: func(i int) client.Object {
				cr := &ogxv1beta1.OGXServer{
					ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("ogx-%03d", i)},
					Spec:       ogxv1beta1.OGXServerSpec{Distribution: ogxv1beta1.DistributionSpec{Name: "starter"}},
				}
				if i == 0 {
					cr.Spec.OverrideConfig = &ogxv1beta1.ConfigMapKeyRef{Name: "run-0", Key: "config.yaml"}
				}
				return cr
			},
			subject: func(i int) (*corev1.ConfigMap, error) {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "run-0"}, Data: map[string]string{"config.yaml": fmt.Sprintf("version: 2\n# %d\n", i)}}, nil
			},
			hash: func(cm *corev1.ConfigMap) string {
				sum := sha256.Sum256([]byte(cm.Data["config.yaml"]))
				return hex.EncodeToString(sum[:])
			},
			deployment: "ogx-000", annotation: ogx.AnnotationUserConfigHash,
			list: func() client.ObjectList { return &ogxv1beta1.OGXServerList{} },
			observed: func(o runtime.Object) bool {
				cr := o.(*ogxv1beta1.OGXServer)
				c := meta.FindStatusCondition(cr.Status.Conditions, status.TypeReconciled)
				return c != nil && c.ObservedGeneration == cr.Generation && cr.Status.Phase != "" && cr.Status.Phase != ogxv1beta1.OGXServerPhaseFailed
			},
		}, nil
	case "TrustyAIService":
		return benchKind{
			cr: func(i int) client.Object {
				return &trustyv1.TrustyAIService{
					ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("tas-%03d", i)},
					Spec:       tasSpec,
				}
			},
			// A service reads the Open Data Hub bundle of its namespace, the
			// only ConfigMap it reads: the latency subject is that of a
			// namespace with one service; that of bench, which all the
			// batch's services read, is edited once (shared).
			subject: func(i int) (*corev1.ConfigMap, error) {
				return odhBundle("bench-ca", fmt.Sprintf("bench %d", i))
			},
			subjectCR: &trustyv1.TrustyAIService{
				ObjectMeta: metav1.ObjectMeta{Namespace: "bench-ca", Name: "tas-ca"},
				Spec:       tasSpec,
			},
			shared: func(i int) (*corev1.ConfigMap, error) {
				return odhBundle("bench", fmt.Sprintf("bench shared %d", i))
			},
			hash:       bundleHash(true),
			deployment: "tas-ca", annotation: trustyai.AnnotationCABundleHash,
			list: func() client.ObjectList { return &trustyv1.TrustyAIServiceList{} },
			observed: func(o runtime.Object) bool {
				cr := o.(*trustyv1.TrustyAIService)
				return cr.Status.ObservedGeneration == cr.Generation && cr.Status.Phase != ""
			},
		}, nil
	case "NemoGuardrails":
		nemo := func(ns, name string) client.Object {
			return &nemov1alpha1.NemoGuardrails{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: nemov1alpha1.NemoGuardrailsSpec{NemoConfigs: []nemov1alpha1.NemoConfig{}}}
		}
		// As TrustyAIService: the Open Data Hub bundle is what a server of
		// no configuration reads.
		return benchKind{
			cr:         func(i int) client.Object { return nemo("bench", fmt.Sprintf("nemo-%03d", i)) },
			subject:    func(i int) (*corev1.ConfigMap, error) { return odhBundle("bench-ca", fmt.Sprintf("bench %d", i)) },
			subjectCR:  nemo("bench-ca", "nemo-ca"),
			shared:     func(i int) (*corev1.ConfigMap, error) { return odhBundle("bench", fmt.Sprintf("bench shared %d", i)) },
			hash:       bundleHash(true),
			deployment: "nemo-ca", annotation: nemoguardrails.AnnotationCABundleHash,
			list: func() client.ObjectList { return &nemov1alpha1.NemoGuardrailsList{} },
			observed: func(o runtime.Object) bool {
				cr := o.(*nemov1alpha1.NemoGuardrails)
				return cr.Status.ObservedGeneration == cr.Generation && cr.Status.Phase != ""
			},
		}, nil
	case "EvalHub":
		hub := func(ns, name string) client.Object {
			return &evalhubv1.EvalHub{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: evalhubv1.EvalHubSpec{
				Database: &evalhubv1.DatabaseSpec{Type: evalhubv1.DatabaseSQLite}, Providers: []string{}, Collections: []string{},
			}}
		}
		// The Open Data Hub bundle is an MLflow CA source (merged without
		// public roots).
		return benchKind{
			cr:         func(i int) client.Object { return hub("bench", fmt.Sprintf("hub-%03d", i)) },
			subject:    func(i int) (*corev1.ConfigMap, error) { return odhBundle("bench-ca", fmt.Sprintf("bench %d", i)) },
			subjectCR:  hub("bench-ca", "hub-ca"),
			shared:     func(i int) (*corev1.ConfigMap, error) { return odhBundle("bench", fmt.Sprintf("bench shared %d", i)) },
			hash:       bundleHash(false),
			deployment: "hub-ca", annotation: evalhub.AnnotationCABundleHash,
			list: func() client.ObjectList { return &evalhubv1.EvalHubList{} },
			observed: func(o runtime.Object) bool {
				cr := o.(*evalhubv1.EvalHub)
				return cr.Status.ObservedGeneration == cr.Generation && cr.Status.Phase != "" && cr.Status.Phase != evalhubv1.PhaseError
			},
		}, nil
	}
	return benchKind{}, fmt.Errorf("-kind %q: LlamaStackDistribution, OGXServer, TrustyAIService, NemoGuardrails or EvalHub", kind)
}

// bundleHash is the content hash of the bundle merged from an Open Data Hub
// bundle, with the public roots or without.
func bundleHash(publicRoots bool) func(*corev1.ConfigMap) string {
	return func(cm *corev1.ConfigMap) string {
		sources := []trust.Source{{Name: "odh", Data: cm.Data}}
		if publicRoots {
			sources = append(sources, trust.Source{Name: "public roots", DER: trust.PublicRoots()})
		}
		b, err := trust.Merge(sources, trust.Options{})
		if err != nil {
			return err.Error()
		}
		return trust.ContentHash(map[string]string{trust.BundleKey: string(b.PEM)}, nil)
	}
}

// tasSpec is the spec of the bench's TrustyAIServices: PVC storage.
var tasSpec = trustyv1.TrustyAIServiceSpec{
	Storage: trustyv1.StorageSpec{Format: "PVC", Folder: "/inputs", Size: "1Gi"},
	Data:    trustyv1.DataSpec{Filename: "data.csv", Format: "CSV"},
	Metrics: trustyv1.MetricsSpec{Schedule: "5s"},
}

// odhBundle is an Open Data Hub CA bundle of one new CA.
func odhBundle(ns, ca string) (*corev1.ConfigMap, error) {
	pem, err := trusttest.CA(ca)
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: trust.ODHBundle}, Data: map[string]string{"ca-bundle.crt": pem}}, err
}

// writes sums the operator's non-read API requests from its client metrics.
func writes(url string) (int, error) {
	return requests(url, "POST", "PUT", "PATCH", "DELETE")
}

// refusedByCode is the operator's refused writes by status code and method.
func refusedByCode(url string) string {
	resp, err := http.Get(url) //nolint:gosec // the operator's own local metrics endpoint
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "rest_client_requests_total{") && !strings.Contains(line, `code="2`) && !strings.Contains(line, `method="GET"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// refusedWrites sums the operator's writes the API server answered with an
// error (conflicts, say), from its client metrics.
func refusedWrites(url string) (int, error) {
	total, err := requests(url, "POST", "PUT", "PATCH", "DELETE")
	if err != nil {
		return 0, err
	}
	ok, err := requestsWithCode(url, "2", "POST", "PUT", "PATCH", "DELETE")
	return total - ok, err
}

// requests sums the operator's API requests of the methods given, from its
// client metrics.
func requests(url string, methods ...string) (int, error) {
	return requestsWithCode(url, "", methods...)
}

// requestsWithCode sums the requests of the methods whose status code starts
// with code ("" for any).
func requestsWithCode(url, code string, methods ...string) (int, error) {
	resp, err := http.Get(url) //nolint:gosec // the operator's own local metrics endpoint
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") || !strings.Contains(line, `code="`+code) {
			continue
		}
		for _, m := range methods {
			if strings.Contains(line, `method="`+m+`"`) {
				f := strings.Fields(line)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					return 0, err
				}
				total += v
			}
		}
	}
	return int(total), sc.Err()
}

// phaseTimes are the operator's reconcile phase histograms' sums and counts.
type phaseTimes map[string]struct{ sum, count float64 }

// phases reads ai_stack_operator_reconcile_phase_seconds of a kind.
func phases(url, kind string) (phaseTimes, error) {
	resp, err := http.Get(url) //nolint:gosec // the operator's own local metrics endpoint
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := phaseTimes{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, suffix := range []string{"_sum{", "_count{"} {
			if !strings.HasPrefix(line, "ai_stack_operator_reconcile_phase_seconds"+suffix) || !strings.Contains(line, `kind="`+kind+`"`) {
				continue
			}
			_, rest, _ := strings.Cut(line, `phase="`)
			phase, _, _ := strings.Cut(rest, `"`)
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return nil, err
			}
			t := out[phase]
			if suffix == "_sum{" {
				t.sum = v
			} else {
				t.count = v
			}
			out[phase] = t
		}
	}
	return out, sc.Err()
}

// phaseSplit prints the time per reconcile of each phase between two
// readings, and its share.
func phaseSplit(before, after phaseTimes) string {
	total := 0.0
	for _, p := range []string{"gather", "prepare", "apply", "status"} {
		total += after[p].sum - before[p].sum
	}
	var parts []string
	for _, p := range []string{"gather", "prepare", "apply", "status"} {
		d, n := after[p].sum-before[p].sum, after[p].count-before[p].count
		if n == 0 || total == 0 {
			parts = append(parts, p+" -")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f ms (%.0f%%)", p, 1000*d/n, 100*d/total))
	}
	return strings.Join(parts, ", ")
}

// managedObjects counts the objects the operator created for the bench's
// CRs (labelled as its own), its cluster-scoped bindings included.
// namespacedLists are the namespaced types the operator creates for the
// bench's CRs: what (v) counts as their objects and the replay floor
// re-creates.
func namespacedLists() []client.ObjectList {
	return []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ServiceAccountList{}, &networkingv1.NetworkPolicyList{}, &corev1.ConfigMapList{}, &corev1.PersistentVolumeClaimList{}, &networkingv1.IngressList{}, &policyv1.PodDisruptionBudgetList{}, &rbacv1.RoleBindingList{}}
}

func managedObjects(ctx context.Context, c client.Client) (int, error) {
	n := 0
	for _, l := range namespacedLists() {
		if err := c.List(ctx, l, client.InNamespace("bench"), client.MatchingLabels{"ai-stack-operator.io/managed": "true"}); err != nil {
			return 0, err
		}
		n += meta.LenList(l)
	}
	// The proxies' ClusterRoleBindings (every kind's name its CR's
	// namespace under the operator's key; TrustyAI's under upstream's too).
	crbs := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, crbs, client.MatchingLabels{release.LabelManaged: "true", release.LabelOwnerNamespace: "bench"}); err != nil {
		return 0, err
	}
	return n + len(crbs.Items), nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

func parallel(n, workers int, f func(int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// A loaded control plane answers some creates with transient errors: retry those.
				err := f(i)
				for try := 1; err != nil && !apierrors.IsAlreadyExists(err) && try < 5; try++ {
					time.Sleep(time.Duration(try) * 200 * time.Millisecond)
					err = f(i)
				}
				if apierrors.IsAlreadyExists(err) {
					err = nil
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func waitFor(limit time.Duration, f func() error) error {
	return waitForEvery(limit, 100*time.Millisecond, f)
}

func waitForEvery(limit, every time.Duration, f func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s: %w", limit, err)
		}
		time.Sleep(every)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return sorted[i-1]
}

func mib(b int64) string        { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func printTable(rows []row) {
	w := [3]int{len("metric"), len("value"), len("target")}
	for _, r := range rows {
		w[0], w[1], w[2] = max(w[0], len(r.metric)), max(w[1], len(r.value)), max(w[2], len(r.target))
	}
	line := func(a, b, c, d string) {
		fmt.Printf("| %-*s | %-*s | %-*s | %s\n", w[0], a, w[1], b, w[2], c, d)
	}
	line("metric", "value", "target", "")
	fmt.Printf("|%s|%s|%s|\n", strings.Repeat("-", w[0]+2), strings.Repeat("-", w[1]+2), strings.Repeat("-", w[2]+2))
	for _, r := range rows {
		line(r.metric, r.value, r.target, r.verdict)
	}
}

// saveURL writes what a GET of url answers to file.
func saveURL(hc *http.Client, url, file string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s\n", file)
	return f.Close()
}

// plural is a kind's plural as its CRD names it (NemoGuardrails is one).
func plural(kind string) string {
	if strings.HasSuffix(kind, "s") {
		return kind
	}
	return kind + "s"
}
