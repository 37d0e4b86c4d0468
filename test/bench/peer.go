package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/test/chaos"
	"k8s.io/apimachinery/pkg/api/meta"
)

// peerNamespace holds the peer operator's CRs; peerWarmup its first one.
const (
	peerNamespace = "peer"
	peerWarmup    = "peer-warmup"
)

// peerRun is what -peer measured of another operator serving the same kind
// (the upstream one: users build it themselves; nothing here builds it).
type peerRun struct {
	binary       string
	binarySize   int64
	took         time.Duration
	cpu          cpuTimes
	writesPerCR  float64
	readsPerCR   float64
	idleWrites   int
	idleReads    int
	memory       chaos.Memory
	operatorSize int64
}

// runPeer runs the peer operator on the fresh cluster before the operator
// starts, as the operator is measured: one CR reconciled first (its start
// left out), then -crs new CRs in namespace peer to their Deployments, the
// same idle window, and its RSS at the end. Its CRs are then deleted while
// it runs (it removes its finalizers) and it stops, so the operator finds
// none of them; what they made stays, outside the operator's caches (they
// hold only objects labelled as its).
func runPeer(ctx context.Context, o options, dir, kubeconfig string, c client.Client, md metadata.Interface) (*peerRun, error) {
	k, err := benchKindOf(o.kind)
	if err != nil {
		return nil, err
	}
	binary, err := filepath.Abs(o.peer)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(binary)
	if err != nil {
		return nil, err
	}
	ours, err := os.Stat(o.manager)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "peer.log")
	fmt.Fprintf(os.Stderr, "bench: peer %s, %d CRs\n", binary, o.crs)
	cmd := exec.Command(binary)
	// Its namespace as the upstream operators read it.
	cmd.Env = []string{"OPERATOR_NAMESPACE=ai-stack-operator-system", "POD_NAMESPACE=ai-stack-operator-system"}
	// In its binary's directory: the upstream llama-stack operator reads its
	// kustomize manifests (manifests/) from the working directory, as its
	// image holds them.
	cmd.Dir = filepath.Dir(binary)
	// The flags every kubebuilder-made operator has.
	cmd, metricsURL, err := startProcess(cmd, kubeconfig, logPath, func(metricsAddr string) []string {
		return []string{"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0"}
	})
	if err != nil {
		return nil, err
	}
	stopped := false
	stop := func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
			stopped = true
		}
	}
	defer stop()
	for _, ns := range []string{peerNamespace, peerWarmup} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	// What the CRs read, in the peer's namespace too (the first CR reads the
	// latency subject; some kinds' CRs all read one ConfigMap).
	subject, err := k.subject(0)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{subject}
	if k.shared != nil {
		cm, err := k.shared(0)
		if err != nil {
			return nil, err
		}
		objs = append(objs, cm)
	}
	for _, obj := range objs {
		obj.SetNamespace(peerNamespace)
		obj.SetResourceVersion("")
		if err := c.Create(ctx, obj); err != nil {
			return nil, err
		}
	}
	warm := k.cr(1)
	warm.SetNamespace(peerWarmup)
	if err := c.Create(ctx, warm); err != nil {
		return nil, err
	}
	if err := waitFor(2*time.Minute, func() error { return hasDeployment(ctx, c, peerWarmup) }); err != nil {
		return nil, fmt.Errorf("warm-up: %w; the end of its log:\n%s", err, tail(logPath, 20))
	}
	time.Sleep(2 * time.Second)

	w0, r0, err := writesAndReads(metricsURL)
	if err != nil {
		return nil, err
	}
	cpu0, err := descendantsCPU()
	if err != nil {
		return nil, err
	}
	took, err := createBatchIn(ctx, c, md, k, peerNamespace, 0, o.crs)
	if err != nil {
		return nil, err
	}
	cpu1, err := descendantsCPU()
	if err != nil {
		return nil, err
	}
	// Its status writes follow the creates for 10 s (it need not go quiet:
	// the upstream llama-stack operator requeues CRs whose servers are not
	// ready), then the same idle window, whose requests are counted.
	time.Sleep(10 * time.Second)
	w1, r1, err := writesAndReads(metricsURL)
	if err != nil {
		return nil, err
	}
	time.Sleep(o.idle)
	m, err := chaos.ReadMemory(cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	w2, r2, err := writesAndReads(metricsURL)
	if err != nil {
		return nil, err
	}

	// Its CRs go while it runs, so that it removes what it holds them by.
	for _, ns := range []string{peerNamespace, peerWarmup} {
		if err := c.DeleteAllOf(ctx, k.cr(0), client.InNamespace(ns)); err != nil {
			return nil, err
		}
	}
	if err := waitFor(2*time.Minute, func() error {
		for _, ns := range []string{peerNamespace, peerWarmup} {
			list := k.list()
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			if n := meta.LenList(list); n > 0 {
				return fmt.Errorf("%d of its CRs left in %s", n, ns)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	stop()
	return &peerRun{
		binary: binary, binarySize: fi.Size(), operatorSize: ours.Size(), took: took, cpu: cpu1.since(cpu0),
		writesPerCR: float64(w1-w0) / float64(o.crs), readsPerCR: float64(r1-r0) / float64(o.crs), memory: m,
		idleWrites: w2 - w1, idleReads: r2 - r1,
	}, nil
}

// hasDeployment is nil once namespace ns holds a Deployment.
func hasDeployment(ctx context.Context, c client.Client, ns string) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no Deployment in %s yet", ns)
	}
	return nil
}

// rows sets the peer's figures beside the operator's of the same run: the
// time to Deployments against the same replay floor, and the RSS target
// that the issue states as the smallest peer's.
func (p *peerRun) rows(o options, rss int64, took, replay time.Duration, writesPerCR, readsPerCR float64, idleWrites, idleReads int) []row {
	name := filepath.Base(p.binary)
	return []row{
		{fmt.Sprintf("(peer) binary size: %s vs this operator", name), fmt.Sprintf("%d vs %d bytes", p.binarySize, p.operatorSize), "", ""},
		{fmt.Sprintf("(peer) RSS, %d %s idle: %s vs this operator", o.crs, plural(o.kind), name), fmt.Sprintf("%s (anon %s, file %s) vs %s", mib(p.memory.RSS), mib(p.memory.Anon), mib(p.memory.File), mib(rss)), "<= the peer's", verdict(rss <= p.memory.RSS)},
		{fmt.Sprintf("(peer) %d new CRs -> Deployments: %s vs this operator", o.crs, name), fmt.Sprintf("%s (%.2fx the replay floor) vs %s (%.2fx)", p.took.Round(time.Millisecond), p.took.Seconds()/replay.Seconds(), took.Round(time.Millisecond), took.Seconds()/replay.Seconds()), "", ""},
		{fmt.Sprintf("(peer) CPU while creating them: %s", name), p.cpuDescribe(), "", ""},
		{fmt.Sprintf("(peer) writes / reads per new CR, to 10 s after the last Deployment: %s vs this operator", name), fmt.Sprintf("%.2f / %.1f vs %.2f / %.1f", p.writesPerCR, p.readsPerCR, writesPerCR, readsPerCR), "", ""},
		{fmt.Sprintf("(peer) writes / reads in %s idle: %s vs this operator", o.idle, name), fmt.Sprintf("%d / %d vs %d / %d", p.idleWrites, p.idleReads, idleWrites, idleReads), "", ""},
	}
}

// cpuDescribe is the peer's, the API server's and etcd's CPU seconds (the
// kernel keeps 15 bytes of a command's name).
func (p *peerRun) cpuDescribe() string {
	comm := filepath.Base(p.binary)
	if len(comm) > 15 {
		comm = comm[:15]
	}
	return fmt.Sprintf("%s %.2f s, kube-apiserver %.2f s, etcd %.2f s", comm, p.cpu[comm], p.cpu["kube-apiserver"], p.cpu["etcd"])
}

// tail is the last n lines of a file.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
