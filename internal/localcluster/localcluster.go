// Package localcluster starts a local Kubernetes cluster that behaves like a
// real one for an operator, without containers: etcd and kube-apiserver
// (through controller-runtime's envtest), kube-controller-manager (deployment,
// replicaset, HPA, disruption, namespace, garbage collector, serviceaccount,
// PV binder and the other default controllers), kube-scheduler, and kwok,
// which runs simulated nodes and moves their pods through their lifecycle.
//
// What it simulates: scheduling (CPU, memory, pods, zones), ReplicaSets and
// rollouts, pods that become Running and Ready (except those with an image
// containing "never-ready", which run but never become Ready), HPA min/max,
// PDBs, PV binding of static volumes, garbage collection by owner
// references, namespace deletion, ServiceAccount and Pod Security admission
// (restricted by default, kube-system exempt).
// What it does not: no images are pulled, no containers run, there is no
// network, and kwok ignores volumes, missing Secrets, probes and
// runAsNonRoot; those are checked by the operator's own logic and tests.
//
// The binaries come from KUBEBUILDER_ASSETS (built by hack/tools.sh). `make
// demo`, `make test-e2e` and the tests that need pods use it.
package localcluster

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

//go:embed stages.yaml
var podStages []byte

// admissionConfig makes Pod Security enforce "restricted" in every namespace
// but kube-system, as a hardened cluster does.
const admissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: restricted
        enforce-version: latest
        warn: restricted
        warn-version: latest
      exemptions:
        namespaces: [kube-system]
`

// Zones the simulated nodes are spread over.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// Options configure Start.
type Options struct {
	// Assets is the folder of etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok and kubectl; KUBEBUILDER_ASSETS when empty.
	Assets string
	// Dir receives the kubeconfig, the stage file and each process's log.
	Dir string
	// CRDDirs are installed once the API server is up.
	CRDDirs []string
	// Nodes is the number of simulated nodes; 3 when 0.
	Nodes int
	// WithoutWorkloads starts etcd and kube-apiserver only (no controllers,
	// scheduler or nodes), as a bare control plane.
	WithoutWorkloads bool
	// Audit makes the API server log every write (create, update, patch,
	// delete; leases aside) with its user to Cluster.AuditLog, as JSON lines.
	Audit bool
}

// auditPolicy logs writes at Metadata level, lease renewals aside.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    resources:
      - group: coordination.k8s.io
        resources: [leases]
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
`

// Cluster is a running local cluster.
type Cluster struct {
	// Config is an administrator's client configuration.
	Config *rest.Config
	// Kubeconfig is the path of the administrator's kubeconfig.
	Kubeconfig string
	// AuditLog is the API server's audit log (Options.Audit).
	AuditLog string

	env   *envtest.Environment
	procs []*process
	dir   string
}

// RestartAPIServer restarts the API server on the same address,
// certificates and etcd: what is stored survives, connections and watches do
// not. With crash it is SIGKILLed first, and the outage is its start-up
// time (seconds); otherwise it shuts down gracefully, which here takes about
// a minute (it waits for in-flight requests).
func (c *Cluster) RestartAPIServer(crash bool) error {
	api := c.env.ControlPlane.GetAPIServer()
	if crash {
		if err := killChild("kube-apiserver"); err != nil {
			return err
		}
	}
	err := api.Stop()
	for i := 0; crash && err != nil && (errors.Is(err, syscall.ESRCH) || errors.Is(err, os.ErrProcessDone)) && i < 100; i++ {
		// Killed and reaped, but envtest's waiter has not marked it exited
		// yet (a window a loaded machine widens): its Stop signals a
		// process that is gone. Asked again, it returns once it has.
		time.Sleep(50 * time.Millisecond)
		err = api.Stop()
	}
	if err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("start kube-apiserver again: %w", err)
	}
	return nil
}

// killChild SIGKILLs this process's child named comm and waits until it has
// been reaped.
func killChild(comm string) error {
	pids, err := Children()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(b)) != comm {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
		return fmt.Errorf("%s (pid %d) still there after SIGKILL", comm, pid)
	}
	return fmt.Errorf("no child process %s", comm)
}

// UserKubeconfig writes a kubeconfig for a user of its own (a client
// certificate) in system:masters: an administrator whose requests the audit
// log tells apart.
func (c *Cluster) UserKubeconfig(name string) (string, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.dir, "kubeconfig-"+name)
	return path, os.WriteFile(path, kc, 0o600)
}

type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Start starts the cluster and returns once nodes are Ready and the
// controllers run (a namespace gets its default ServiceAccount).
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Assets == "" {
		o.Assets = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if o.Assets == "" {
		return nil, errors.New("localcluster: no assets folder: set KUBEBUILDER_ASSETS (hack/tools.sh assets prints it)")
	}
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	admissionFile := filepath.Join(o.Dir, "admission.yaml")
	if err := os.WriteFile(admissionFile, []byte(admissionConfig), 0o644); err != nil {
		return nil, err
	}

	env := &envtest.Environment{
		BinaryAssetsDirectory: o.Assets,
		CRDDirectoryPaths:     o.CRDDirs,
		ErrorIfCRDPathMissing: len(o.CRDDirs) > 0,
		// The API server's graceful shutdown waits for in-flight requests
		// (RestartAPIServer).
		ControlPlaneStopTimeout: 2 * time.Minute,
		// envtest's default is 20 s; a restart of an API server whose etcd
		// already holds the fault tests' CRs took longer on a loaded 2-core
		// machine ("timeout waiting for process kube-apiserver to start").
		ControlPlaneStartTimeout: time.Minute,
	}
	api := env.ControlPlane.GetAPIServer()
	// envtest's /24 holds 254 Services; the bench makes 1,000.
	api.Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	// A folder of its own keeps its certificates across RestartAPIServer.
	api.CertDir = filepath.Join(o.Dir, "apiserver")
	if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
		return nil, err
	}
	var auditLog string
	if o.Audit {
		policy := filepath.Join(o.Dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
			return nil, err
		}
		auditLog = filepath.Join(o.Dir, "audit.log")
		api.Configure().Set("audit-policy-file", policy).Set("audit-log-path", auditLog)
	}
	if !o.WithoutWorkloads {
		// envtest turns ServiceAccount admission off because it runs no
		// controllers; with them it is on, as in a real cluster.
		api.Configure().Disable("disable-admission-plugins")
		api.Configure().Set("admission-control-config-file", admissionFile)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c = &Cluster{Config: cfg, env: env, Kubeconfig: filepath.Join(o.Dir, "kubeconfig"), AuditLog: auditLog, dir: o.Dir}
	defer func() {
		if err != nil {
			_ = c.Stop()
			c = nil
		}
	}()
	if err := os.WriteFile(c.Kubeconfig, env.KubeConfig, 0o600); err != nil {
		return c, fmt.Errorf("write kubeconfig: %w", err)
	}
	if o.WithoutWorkloads {
		return c, nil
	}

	kc := "--kubeconfig=" + c.Kubeconfig
	auth := []string{kc, "--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig}
	if err := c.spawn(o, "kube-controller-manager", append(slices.Concat(auth, noClientRateLimit),
		// The token controllers need the CA's key; pods get projected tokens anyway.
		"--controllers=*,-serviceaccount-token,-bootstrapsigner,-tokencleaner",
		// Simulated nodes never fail; the node lifecycle controller (which lifts
		// the not-ready taint from new nodes) must not mark them NotReady when
		// kwok's lease renewals lag on a loaded machine.
		"--node-monitor-grace-period=1h",
		"--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0",
		// Quick reactions: this is a test cluster.
		"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
		"--horizontal-pod-autoscaler-sync-period=2s",
	)...); err != nil {
		return c, err
	}
	if err := c.spawn(o, "kube-scheduler", append(slices.Concat(auth, noClientRateLimit), "--leader-elect=false", "--secure-port=0")...); err != nil {
		return c, err
	}
	stages := filepath.Join(o.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, podStages, 0o644); err != nil {
		return c, err
	}
	if err := c.spawn(o, "kwok", kc, "--manage-all-nodes=true", "--server-address=127.0.0.1:0", "--config="+stages); err != nil {
		return c, err
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return c, err
	}
	for i := 0; i < o.Nodes; i++ {
		if _, err := cs.CoreV1().Nodes().Create(ctx, node(i), metav1.CreateOptions{}); err != nil {
			return c, fmt.Errorf("create node: %w", err)
		}
	}
	return c, c.waitReady(ctx, cs, o.Nodes)
}

// noClientRateLimit lifts the controller-manager's and the scheduler's
// client-side rate limits (20 and 50 requests/s by default) as kwokctl's
// --disable-qps-limits does, with its figures: with hundreds of Deployments
// rolling at once (a soak's shared CA bundle edit) the controller-manager
// otherwise falls minutes behind, and every test waits for it instead of for
// the operator. kwok itself has no client rate limit.
var noClientRateLimit = []string{"--kube-api-qps=5000", "--kube-api-burst=10000"}

// node is a simulated node: big enough for any test, in one of three zones.
// Every LlamaStackDistribution pod requests a CPU and 1Gi by default (as
// upstream's): the soak's hundreds of CRs fit on three of these. Pods too:
// a real node's 110 left the full soak's 300 CRs (and their rollouts'
// surge pods) Pending on three nodes ("3 Too many pods"), never Ready.
func node(i int) *corev1.Node {
	name := fmt.Sprintf("kwok-node-%d", i)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1024"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":      name,
				"kubernetes.io/os":            "linux",
				"kubernetes.io/arch":          "amd64",
				"topology.kubernetes.io/zone": zones[i%len(zones)],
				"type":                        "kwok",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// waitReady waits for every node to be Ready and for the controllers to run.
func (c *Cluster) waitReady(ctx context.Context, cs kubernetes.Interface, nodes int) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready := 0
		if list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			for _, n := range list.Items {
				for _, cond := range n.Status.Conditions {
					if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		_, saErr := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if ready == nodes && saErr == nil {
			return nil
		}
		for _, p := range c.procs {
			select {
			case <-p.done:
				return fmt.Errorf("%s exited: %v (log: %s)", p.name, p.cmd.ProcessState, p.log.Name())
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("local cluster not ready after 60s: %d of %d nodes Ready, default ServiceAccount: %v (logs in %s)", ready, nodes, saErr, filepath.Dir(c.Kubeconfig)) //nolint:errorlint // saErr may be nil: a figure, not a cause
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) spawn(o Options, name string, args ...string) error {
	log, err := os.Create(filepath.Join(o.Dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(o.Assets, name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The children die with the launcher, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() { _ = cmd.Wait(); close(p.done) }()
	c.procs = append(c.procs, p)
	return nil
}

// Stop stops every process of the cluster, the last started first, and
// waits for each to exit.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.log.Close()
	}
	c.procs = nil
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Children lists the processes whose parent is this process (for tests that
// check that nothing is left behind).
func Children() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut after ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 {
			if ppid, _ := strconv.Atoi(fields[1]); ppid == self {
				state := fields[0]
				if state != "Z" {
					out = append(out, pid)
				}
			}
		}
	}
	return out, nil
}
