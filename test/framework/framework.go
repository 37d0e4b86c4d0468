// Package framework is what every Go test suite that runs a control plane
// shares: the environments (envtest, the local cluster), the operator's
// manager started in-process, CR builders per kind, and the waits.
//
// A suite is a short suite_test.go (its TestMain: an environment, the
// operator, an Env) plus one file per topic. Which tier owns which feature
// is docs/testing.md.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

const (
	// OperatorNamespace and SettingsConfigMap are the operator's namespace
	// and settings ConfigMap in every suite, as the manifests install it.
	OperatorNamespace = "ai-stack-operator-system"
	SettingsConfigMap = "ai-stack-operator-config"
	// Tick is how often a wait looks again.
	Tick = 100 * time.Millisecond
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Eventually calls cond every Tick until it returns nil, and fails the test
// with cond's last error after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("timed out waiting for %s: %v", what, err)
	}
}

// TimeoutScale multiplies every wait of the suites (Poll, Eventually, the
// Env's waits): TEST_TIMEOUT_SCALE, 1 when unset. The one knob for a slower
// machine (docs/testing.md); the waits themselves wait on the condition they
// mean, so a larger scale costs time only when something is wrong.
var TimeoutScale = func() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("TEST_TIMEOUT_SCALE"), 64); err == nil && v > 0 {
		return v
	}
	return 1
}()

// Scaled is d times TimeoutScale.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * TimeoutScale) }

// Poll calls cond every Tick until it returns nil, or returns its last error
// after timeout, scaled by TimeoutScale (for a TestMain, which has no
// *testing.T).
func Poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(Scaled(timeout))
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(Tick)
	}
}

// Env is a suite's API server as the tests see it: a direct client (what
// they read is the API server's truth) and the waits' timeout.
type Env struct {
	Client  client.Client
	Config  *rest.Config
	Timeout time.Duration
}

// NewEnv is an Env of the API server at cfg, with the operator's scheme.
func NewEnv(cfg *rest.Config, timeout time.Duration) (*Env, error) {
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return nil, err
	}
	return &Env{Client: c, Config: cfg, Timeout: timeout}, nil
}

// Eventually is Eventually with the Env's timeout.
func (e *Env) Eventually(t testing.TB, what string, cond func() error) {
	t.Helper()
	Eventually(t, e.Timeout, what, cond)
}

// Get reads an object, with an error when it is absent.
func (e *Env) Get(ns, name string, obj client.Object) error {
	return e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// Gone returns nil once the object of that name no longer exists.
func (e *Env) Gone(ns, name string, obj client.Object) error {
	err := e.Get(ns, name, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%T %s/%s still exists", obj, ns, name)
}

// GoneFrom is Gone of obj's own name, as a condition to wait for.
func (e *Env) GoneFrom(obj client.Object) func() error {
	return func() error { return e.Gone(obj.GetNamespace(), obj.GetName(), obj) }
}

// Update reads obj, applies change and updates it, again on a conflict: the
// operator may write the status between the test's read and its update.
func (e *Env) Update(t testing.TB, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return e.Client.Update(context.Background(), obj)
	})
	require.NoError(t, err)
}

// UpdateStatus writes obj's status after change, reading obj again and
// changing it again on a conflict: the operator may write the object
// between a test's read and its write (playing a controller that writes a
// status, the test must not lose that race).
func (e *Env) UpdateStatus(t testing.TB, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return e.Client.Status().Update(context.Background(), obj)
	})
	require.NoError(t, err)
}

// NewNamespace creates a namespace of its own for a test, named after
// prefix ("t" when empty) and a random suffix. Its CRs are deleted when the
// test ends: envtest runs no namespace controller, and a test's CRs would
// otherwise keep reconciling for the rest of the suite.
func (e *Env) NewNamespace(t testing.TB, prefix string) string {
	t.Helper()
	if prefix == "" {
		prefix = "t"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + strings.ToLower(rand.String(8))}}
	require.NoError(t, e.Client.Create(context.Background(), ns))
	t.Cleanup(func() {
		_ = e.Client.DeleteAllOf(context.Background(), &llamav1alpha1.LlamaStackDistribution{}, client.InNamespace(ns.Name))
		_ = e.Client.DeleteAllOf(context.Background(), &trustyv1.TrustyAIService{}, client.InNamespace(ns.Name))
	})
	return ns.Name
}

// EventReasons lists the reasons of the events about the object of that name.
func (e *Env) EventReasons(t testing.TB, ns, name string) []string {
	t.Helper()
	list := &corev1.EventList{}
	require.NoError(t, e.Client.List(context.Background(), list, client.InNamespace(ns)))
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name {
			out = append(out, ev.Reason)
		}
	}
	return out
}

// HasReason returns nil once an event of the reason is about the object.
func (e *Env) HasReason(t testing.TB, ns, name, reason string) error {
	t.Helper()
	reasons := e.EventReasons(t, ns, name)
	for _, r := range reasons {
		if r == reason {
			return nil
		}
	}
	return fmt.Errorf("no event %s for %s/%s; events: %v", reason, ns, name, reasons)
}

// WaitPhase waits for the LlamaStackDistribution (read into cr) to reach the
// phase at generation gen (its current generation when 0) with at least min
// available replicas.
func (e *Env) WaitPhase(t testing.TB, cr *llamav1alpha1.LlamaStackDistribution, phase llamav1alpha1.DistributionPhase, gen int64, minAvailable ...int32) {
	t.Helper()
	e.Eventually(t, fmt.Sprintf("%s/%s phase %s", cr.Namespace, cr.Name, phase), func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(cr), cr); err != nil {
			return err
		}
		want := gen
		if want == 0 {
			want = cr.Generation
		}
		if cr.Status.Phase != phase || cr.Status.ObservedGeneration != want {
			return fmt.Errorf("phase %q at generation %d/%d, conditions %+v", cr.Status.Phase, cr.Status.ObservedGeneration, want, cr.Status.Conditions)
		}
		if len(minAvailable) > 0 && cr.Status.AvailableReplicas < minAvailable[0] {
			return fmt.Errorf("%d available, want %d", cr.Status.AvailableReplicas, minAvailable[0])
		}
		return nil
	})
}

// WaitLLSD waits for the LlamaStackDistribution of that name to reach the
// phase at its current generation, and returns it.
func (e *Env) WaitLLSD(t testing.TB, ns, name string, phase llamav1alpha1.DistributionPhase) *llamav1alpha1.LlamaStackDistribution {
	t.Helper()
	cr := &llamav1alpha1.LlamaStackDistribution{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	e.WaitPhase(t, cr, phase, 0)
	return cr
}

// WaitTASReady waits for the TrustyAIService (read into tas) to be Ready at
// its current generation.
func (e *Env) WaitTASReady(t testing.TB, tas *trustyv1.TrustyAIService) {
	t.Helper()
	e.Eventually(t, "TrustyAIService "+tas.Namespace+"/"+tas.Name+" Ready", func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(tas), tas); err != nil {
			return err
		}
		if tas.Status.Phase != trustyv1.PhaseReady || tas.Status.ObservedGeneration != tas.Generation {
			return fmt.Errorf("phase %q, conditions %+v", tas.Status.Phase, tas.Status.Conditions)
		}
		return nil
	})
}

// WaitOGX waits for the OGXServer of that name to reach the phase, its
// Reconciled condition at its current generation, and returns it.
func (e *Env) WaitOGX(t testing.TB, ns, name string, phase ogxv1beta1.OGXServerPhase) *ogxv1beta1.OGXServer {
	t.Helper()
	cr := &ogxv1beta1.OGXServer{}
	e.Eventually(t, fmt.Sprintf("OGXServer %s/%s phase %s", ns, name, phase), func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cr.Status.Conditions, status.TypeReconciled)
		if cr.Status.Phase != phase || c == nil || c.ObservedGeneration != cr.Generation {
			return fmt.Errorf("phase %q at generation %d, conditions %+v", cr.Status.Phase, cr.Generation, cr.Status.Conditions)
		}
		return nil
	})
	return cr
}

// UpstreamLMEvalJobSample is the first LMEvalJob of upstream
// trustyai-service-operator's controllers/job_mgr/README.md (11c335b),
// unchanged: queued in Kueue's user-queue, suspend true, generateName in
// namespace default.
const UpstreamLMEvalJobSample = `apiVersion: trustyai.opendatahub.io/v1alpha1
kind: LMEvalJob
metadata:
  labels:
    app.kubernetes.io/name: fms-lm-eval-service
    app.kubernetes.io/managed-by: kustomize
    kueue.x-k8s.io/queue-name: user-queue
  generateName: evaljob-sample-
  namespace: default
spec:
  pod:
    container:
      resources:
        requests:
          cpu: 2
  suspend: true
  model: hf
  modelArgs:
  - name: pretrained
    value: EleutherAI/pythia-70m
  taskList:
    taskNames:
    - unfair_tos
  logSamples: true
  limit: "5"
`

// LMEvalJob is upstream's LMEvalJob example (controllers/job_mgr/README.md,
// sample 1) as a cluster without Kueue runs it: pythia-70m on unfair_tos,
// 5 samples.
func LMEvalJob(ns, name string) *lmv1alpha1.LMEvalJob {
	return &lmv1alpha1.LMEvalJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: lmv1alpha1.LMEvalJobSpec{
			Model:     "hf",
			ModelArgs: []lmv1alpha1.Arg{{Name: "pretrained", Value: "EleutherAI/pythia-70m"}},
			TaskList:  lmv1alpha1.TaskList{TaskNames: []string{"unfair_tos"}},
			Limit:     "5",
		},
	}
}

// WaitLMEvalJob waits until the job is in state with reason ("" for any).
func (e *Env) WaitLMEvalJob(t testing.TB, ns, name string, state lmv1alpha1.JobState, reason lmv1alpha1.Reason) *lmv1alpha1.LMEvalJob {
	t.Helper()
	job := &lmv1alpha1.LMEvalJob{}
	e.Eventually(t, fmt.Sprintf("LMEvalJob %s/%s %s %s", ns, name, state, reason), func() error {
		if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		if job.Status.State != state || (reason != "" && job.Status.Reason != reason) {
			return fmt.Errorf("state %q reason %q: %s", job.Status.State, job.Status.Reason, job.Status.Message)
		}
		return nil
	})
	return job
}

// OGX is an OGXServer of the starter distribution with the image's own
// configuration.
func OGX(ns, name string) *ogxv1beta1.OGXServer {
	return &ogxv1beta1.OGXServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ogxv1beta1.OGXServerSpec{Distribution: ogxv1beta1.DistributionSpec{Name: "starter"}},
	}
}

// LLSD is a one-replica LlamaStackDistribution of the starter distribution.
func LLSD(ns, name string) *llamav1alpha1.LlamaStackDistribution {
	return &llamav1alpha1.LlamaStackDistribution{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{
			Distribution: llamav1alpha1.DistributionType{Name: "starter"},
		}},
	}
}

// TAS is a TrustyAIService in PVC mode (upstream's sample): a claim of 1Gi,
// CSV data, metrics every 5 s.
func TAS(ns, name string) *trustyv1.TrustyAIService {
	return &trustyv1.TrustyAIService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trustyv1.TrustyAIServiceSpec{
			Storage: trustyv1.StorageSpec{Format: "PVC", Folder: "/inputs", Size: "1Gi"},
			Data:    trustyv1.DataSpec{Filename: "data.csv", Format: "CSV"},
			Metrics: trustyv1.MetricsSpec{Schedule: "5s"},
		},
	}
}

// TASDatabase is a TrustyAIService in DATABASE mode: no volume to bind, and
// pods that start without the database's Secret on simulated nodes.
func TASDatabase(ns, name string) *trustyv1.TrustyAIService {
	return &trustyv1.TrustyAIService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trustyv1.TrustyAIServiceSpec{
			Storage: trustyv1.StorageSpec{Format: "DATABASE", DatabaseConfigurations: "db"},
			Metrics: trustyv1.MetricsSpec{Schedule: "5s"},
		},
	}
}

// Nemo is a NemoGuardrails of one configuration, the ConfigMap nemo-config
// (which the caller creates: NemoConfigMap), as upstream's sample.
func Nemo(ns, name string) *nemov1alpha1.NemoGuardrails {
	return &nemov1alpha1.NemoGuardrails{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: nemov1alpha1.NemoGuardrailsSpec{
			NemoConfigs: []nemov1alpha1.NemoConfig{{Name: "nemo-config", ConfigMaps: []string{"nemo-config"}, Default: true}},
		},
	}
}

// NemoConfigMap is the configuration Nemo reads.
func NemoConfigMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nemo-config"},
		Data:       map[string]string{"config.yaml": "models: []"},
	}
}

// EvalHub is an EvalHub of one namespace with a SQLite database and no
// providers or collections (so none has to be installed).
func EvalHub(ns, name string) *evalhubv1.EvalHub {
	return &evalhubv1.EvalHub{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: evalhubv1.EvalHubSpec{
			Database: &evalhubv1.DatabaseSpec{Type: "sqlite"}, Tenancy: evalhubv1.TenancySingle,
			Providers: []string{}, Collections: []string{},
		},
	}
}

// Builders are a CR of each kind the operator serves, by kind: what a test
// that goes through every kind starts from. A test checks that it has one
// for every kind of the operator's registry.
var Builders = map[string]func(ns, name string) client.Object{
	"LlamaStackDistribution": func(ns, name string) client.Object { return LLSD(ns, name) },
	"OGXServer":              func(ns, name string) client.Object { return OGX(ns, name) },
	"TrustyAIService":        func(ns, name string) client.Object { return TAS(ns, name) },
	"NemoGuardrails":         func(ns, name string) client.Object { return Nemo(ns, name) },
	"EvalHub":                func(ns, name string) client.Object { return EvalHub(ns, name) },
	"LMEvalJob":              func(ns, name string) client.Object { return LMEvalJob(ns, name) },
}

// ModelMeshDeployment is a Deployment as ModelMesh Serving makes one: its
// label, a rest-proxy and an mm container (with env), admitted by Pod
// Security's restricted profile, which the local cluster enforces.
func ModelMeshDeployment(ns, name string, env ...corev1.EnvVar) *appsv1.Deployment {
	labels := map[string]string{"modelmesh-service": "modelmesh-serving", "name": name}
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{
						{Name: "rest-proxy", Image: "kserve/rest-proxy", SecurityContext: restricted.DeepCopy()},
						{Name: "mm", Image: "kserve/modelmesh", Env: env, SecurityContext: restricted.DeepCopy()},
					},
				},
			},
		},
	}
}

// ManagerOptions are the operator's options as the suites run it: every
// kind of the registry with its default settings, no metrics or probe listeners, the operator's
// namespace and settings ConfigMap.
func ManagerOptions() (operator.ManagerOptions, error) {
	ws, err := operator.Watches("")
	if err != nil {
		return operator.ManagerOptions{}, err
	}
	return operator.ManagerOptions{
		Watches: ws, MetricsAddr: "0", ProbeAddr: "0",
		OperatorNamespace: OperatorNamespace, SettingsConfigMap: SettingsConfigMap,
		SkipControllerNameValidation: true,
	}, nil
}

// NewManager is the operator's manager with ManagerOptions changed by tune
// (when given).
func NewManager(cfg *rest.Config, tune func(*operator.ManagerOptions)) (manager.Manager, error) {
	o, err := ManagerOptions()
	if err != nil {
		return nil, err
	}
	if tune != nil {
		tune(&o)
	}
	return operator.NewManager(cfg, o)
}

// Start runs the manager until the returned function is called, which
// returns the manager's error.
func Start(mgr manager.Manager) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// RunManager runs the operator's manager (NewManager) for a test, until the
// returned function is called; the manager's error fails the test.
func RunManager(t testing.TB, cfg *rest.Config, tune func(*operator.ManagerOptions)) (stop func()) {
	t.Helper()
	mgr, err := NewManager(cfg, tune)
	require.NoError(t, err)
	s := Start(mgr)
	return func() {
		if err := s(); err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

// CreateOperatorNamespace creates the operator's namespace (for a TestMain).
func CreateOperatorNamespace(c client.Client) error {
	err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Fail prints a TestMain's error and returns its exit code.
func Fail(err error) int {
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// OperatorBinary is the operator's binary as the image builds it (no cgo,
// no symbol table or DWARF): $OPERATOR_BINARY when set (the Makefile builds
// bin/manager once per run and sets it), else built into dir.
func OperatorBinary(dir string) (string, error) {
	if b := os.Getenv("OPERATOR_BINARY"); b != "" {
		abs, err := filepath.Abs(b)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("OPERATOR_BINARY: %w", err)
		}
		return abs, nil
	}
	binary := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binary, "./cmd/manager")
	build.Dir = Root()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return binary, nil
}
