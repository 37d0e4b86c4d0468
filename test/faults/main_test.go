// Package faults runs the operator's binary against the local cluster and
// hurts it: SIGKILLs during installs and upgrades, a proxy that cuts or slows
// its connections to the API server, a real API server restart, a leader
// killed mid-batch, and a soak of random operations with restarts. After
// each, every CR must converge to what its release renders (test/chaos's
// Checker), with nothing leaked.
//
// `make test` runs them shortened (FAULTS unset); `make test-faults` runs
// them in full (FAULTS=full): more CRs, more rounds, 30 s outages, the
// default lease and pending-release grace, a 30-minute soak. FAULTS_SEED
// replays the random kill points and operations of a run.
package faults

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

const operatorNamespace = framework.OperatorNamespace

var (
	cluster *localcluster.Cluster
	k8s     client.Client
	checker chaos.Checker
	binary  string
	full    = os.Getenv("FAULTS") == "full"
)

// scale picks the shortened or the full figure.
func scale[T any](short, long T) T {
	if full {
		return long
	}
	return short
}

// grace is the pending-release grace the operators run with: the default in
// full runs.
var grace = scale(20*time.Second, 2*time.Minute)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "faults-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Built as the image builds it (Dockerfile), so the soak's RSS is the
	// shipped binary's: no cgo, no symbol table or DWARF.
	if binary, err = framework.OperatorBinary(dir); err != nil {
		return framework.Fail(err)
	}
	cluster, err = localcluster.Start(context.Background(), localcluster.Options{
		Dir: filepath.Join(dir, "cluster"), CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}, Audit: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()
	env, err := framework.NewEnv(cluster.Config, time.Minute)
	if err != nil {
		return framework.Fail(err)
	}
	k8s = env.Client
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	checker = chaos.Checker{Client: k8s, Clientset: cs, OperatorNamespace: operatorNamespace, MaxHistory: 3, WantReady: true}
	if err := framework.CreateOperatorNamespace(k8s); err != nil {
		return framework.Fail(err)
	}
	return m.Run()
}

// seed is FAULTS_SEED or a new one, printed so a failing run can be replayed.
func seed(t *testing.T) *rand.Rand {
	t.Helper()
	s := time.Now().UnixNano()
	if v := os.Getenv("FAULTS_SEED"); v != "" {
		var err error
		if s, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("FAULTS_SEED: %v", err)
		}
	}
	t.Logf("seed %d (FAULTS_SEED=%d replays it)", s, s)
	return rand.New(rand.NewSource(s))
}

// runOperator runs the operator's binary as user (a client certificate of its
// own, so the audit log tells its writes apart), with kubeconfig instead of
// the user's own when given. It is stopped at the end of the test, and its
// log printed if the test failed.
func runOperator(t *testing.T, user, kubeconfig string, args ...string) *chaos.Operator {
	t.Helper()
	kc, err := cluster.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	if kubeconfig != "" {
		kc = kubeconfig
	}
	o := &chaos.Operator{
		Bin: binary, Dir: filepath.Join("..", ".."),
		Args: append([]string{"run", "--operator-namespace", operatorNamespace,
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--pending-release-grace", grace.String()}, args...),
		Env: []string{"KUBECONFIG=" + kc, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")},
		Log: filepath.Join(t.TempDir(), user+".log"),
	}
	t.Cleanup(func() {
		o.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(o.Log)
			t.Logf("%s's log (end):\n%s", user, tail(string(b), 80))
		}
	})
	return o
}

// kubeconfigVia is user's kubeconfig with the server replaced by addr (a
// proxy on 127.0.0.1, which the serving certificate names).
func kubeconfigVia(t *testing.T, user, addr string) string {
	t.Helper()
	kc, err := cluster.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	path := filepath.Join(t.TempDir(), "kubeconfig-via-proxy")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// batch is n CRs for namespace ns: every fourth a TrustyAIService (DATABASE
// mode: the simulated nodes start its pods without the Secret), the others
// one-replica starter distributions.
func batch(ns string, n int) []client.Object {
	var out []client.Object
	for i := 0; i < n; i++ {
		if i%4 == 3 {
			out = append(out, framework.TASDatabase(ns, fmt.Sprintf("tas-%03d", i)))
			continue
		}
		out = append(out, framework.LLSD(ns, fmt.Sprintf("llsd-%03d", i)))
	}
	return out
}

// create creates the objects, 8 at a time, in the background; the returned
// function waits for it and fails the test on an error.
func create(t *testing.T, objs []client.Object) (wait func()) {
	t.Helper()
	return inParallel(t, objs, func(o client.Object) error { return k8s.Create(context.Background(), o) })
}

// edit changes every CR's spec (an env variable or the metrics schedule,
// to round r) in the background: an upgrade each.
func edit(t *testing.T, objs []client.Object, r int) (wait func()) {
	t.Helper()
	return inParallel(t, objs, func(o client.Object) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			switch cr := o.(type) {
			case *llamav1alpha1.LlamaStackDistribution:
				cr.Spec.Server.ContainerSpec.Env = []corev1.EnvVar{{Name: "ROUND", Value: strconv.Itoa(r)}}
			case *trustyv1.TrustyAIService:
				cr.Spec.Metrics.Schedule = fmt.Sprintf("%ds", 5+r)
			}
			return k8s.Update(context.Background(), o)
		})
	})
}

func inParallel(t *testing.T, objs []client.Object, f func(client.Object) error) (wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	next := make(chan client.Object)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range next {
				// The API server may be down or slow on purpose: retry.
				var err error
				for try := 0; try < 60; try++ {
					if err = f(o); err == nil {
						break
					}
					time.Sleep(time.Second)
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", o.GetName(), err)
				}
			}
		}()
	}
	go func() {
		for _, o := range objs {
			next <- o
		}
		close(next)
	}()
	return func() {
		t.Helper()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// waitConverged waits up to limit for the namespaces' CRs to converge, and
// returns how long that took.
func waitConverged(t *testing.T, limit time.Duration, namespaces ...string) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < limit {
		if err = checker.Converged(context.Background(), namespaces...); err == nil {
			return time.Since(start)
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("not converged after %s:\n%v", limit, err)
	return 0
}

// writesBy counts the writes of a user, and those about namespace ns when
// ns is not "".
func writesBy(t *testing.T, user, ns string) int {
	t.Helper()
	ws, err := chaos.Writes(cluster.AuditLog, user)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range ws {
		if ns == "" || w.Namespace == ns {
			n++
		}
	}
	return n
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// mustRun fails the test if the operator exited by itself.
func mustRun(t *testing.T, o *chaos.Operator, when string) {
	t.Helper()
	if done, err := o.Exited(); done {
		b, _ := os.ReadFile(o.Log)
		t.Fatalf("the operator exited %s (%v); its log ends:\n%s", when, err, tail(string(b), 30))
	}
}

// freshWritesNothing runs a fresh operator process as user for a while: it
// reconciles every CR, computes the same renders, and must write nothing
// about namespace ns (no upgrade, repair, status or event).
func freshWritesNothing(t *testing.T, user, ns string, d time.Duration) {
	t.Helper()
	fresh := runOperator(t, user, "")
	if err := fresh.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	mustRun(t, fresh, "while reconciling settled CRs")
	if n := writesBy(t, user, ns); n != 0 {
		t.Errorf("a fresh operator wrote %d times about settled CRs: their objects were not what a fresh render gives (%s)", n, byResource(t, user))
	}
}
