package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust/trusttest"
)

// Soak runs random operations on CRs of one namespace for a while.
type Soak struct {
	Client    client.Client
	Namespace string
	// CRs is how many: every fourth a TrustyAIService, the others
	// distributions, a third of which read a ConfigMap of run.yaml and a
	// third a CA bundle ConfigMap; the TrustyAIServices read the namespace's
	// Open Data Hub CA bundle.
	CRs int
	// Duration of the random operations.
	Duration time.Duration
	// Every is the pause between two operations.
	Every time.Duration
	Rand  *rand.Rand
	// Restart restarts the operator (killed or stopped, as it likes); it is
	// an operation at most once per RestartEvery.
	Restart      func() error
	RestartEvery time.Duration
	// QuietTail is the last part of Duration without restarts, over which
	// the bench judges the process's RSS.
	QuietTail time.Duration
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Counts are how many operations of each kind a soak ran.
type Counts map[string]int

func (c Counts) String() string {
	var parts []string
	for k, v := range c {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

const (
	soakRunConfig = "soak-run"
	soakCAs       = "soak-cas"
)

// Objects are the soak's CRs as first created.
func (s Soak) Objects() []client.Object {
	var out []client.Object
	for i := 0; i < s.CRs; i++ {
		if i%4 == 3 {
			out = append(out, &trustyv1.TrustyAIService{
				ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: fmt.Sprintf("tas-%03d", i)},
				Spec: trustyv1.TrustyAIServiceSpec{
					Storage: trustyv1.StorageSpec{Format: "DATABASE", DatabaseConfigurations: "db"},
					Metrics: trustyv1.MetricsSpec{Schedule: "5s"},
				},
			})
			continue
		}
		cr := &llamav1alpha1.LlamaStackDistribution{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: fmt.Sprintf("llsd-%03d", i)},
			Spec: llamav1alpha1.LlamaStackDistributionSpec{Replicas: 1, Server: llamav1alpha1.ServerSpec{
				Distribution: llamav1alpha1.DistributionType{Name: "starter"},
			}},
		}
		switch i % 3 {
		case 1:
			cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: soakRunConfig}
		case 2:
			cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: soakCAs}}
		}
		out = append(out, cr)
	}
	return out
}

// Setup creates the ConfigMaps the CRs read and the CRs.
func (s Soak) Setup(ctx context.Context) error {
	for _, cm := range []func(int) (*corev1.ConfigMap, error){s.runConfig, s.cas, s.odh} {
		c, err := cm(0)
		if err != nil {
			return err
		}
		if err := s.Client.Create(ctx, c); err != nil {
			return err
		}
	}
	for _, o := range s.Objects() {
		if err := s.create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

func (s Soak) runConfig(i int) (*corev1.ConfigMap, error) {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: soakRunConfig}, Data: map[string]string{"config.yaml": fmt.Sprintf("version: 2\n# edit %d\n", i)}}, nil
}

func (s Soak) cas(i int) (*corev1.ConfigMap, error) {
	ca, err := trusttest.CA(fmt.Sprintf("soak %d", i))
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: soakCAs}, Data: map[string]string{"ca-bundle.crt": ca}}, err
}

func (s Soak) odh(i int) (*corev1.ConfigMap, error) {
	ca, err := trusttest.CA(fmt.Sprintf("soak odh %d", i))
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: trust.ODHBundle}, Data: map[string]string{"ca-bundle.crt": ca}}, err
}

// Run runs random operations for Duration: spec edits, edits of the
// ConfigMaps the CRs read, deletes and re-creates, operator restarts. It
// returns once every deleted CR has been created again.
func (s Soak) Run(ctx context.Context) (Counts, error) {
	counts := Counts{}
	objs := s.Objects()
	deleted := map[int]bool{}
	lastRestart := time.Now()
	end := time.Now().Add(s.Duration)
	edits := 0
	for time.Now().Before(end) {
		edits++
		i := s.Rand.Intn(len(objs))
		var op string
		var err error
		p := s.Rand.Intn(100)
		switch {
		case s.Restart != nil && time.Since(lastRestart) >= s.RestartEvery && time.Until(end) >= s.QuietTail:
			// A restart is due: one every RestartEvery, not left to chance
			// (at 15% a draw, a short soak could end without one).
			p = 100
		case counts["spec edit"] == 0:
			// Every kind of operation at least once, however few a slow
			// machine gets through in Duration: a spec edit, then a delete.
			p = 0
		case counts["delete"] == 0 && !deleted[i]:
			p = 70
		}
		switch {
		case p < 40:
			op, err = "spec edit", s.editSpec(ctx, objs[i], edits)
		case p < 55:
			op, err = "run.yaml ConfigMap edit", s.editConfigMap(ctx, s.runConfig, edits)
		case p < 65:
			op, err = "CA bundle edit", s.editConfigMap(ctx, s.cas, edits)
		case p < 70:
			op, err = "Open Data Hub CA bundle edit", s.editConfigMap(ctx, s.odh, edits)
		case p < 85:
			if deleted[i] {
				op, err = "re-create", s.create(ctx, objs[i])
				if err == nil {
					delete(deleted, i)
				}
				break
			}
			op, err = "delete", client.IgnoreNotFound(s.Client.Delete(ctx, objs[i]))
			deleted[i] = err == nil
		default:
			if s.Restart == nil || time.Since(lastRestart) < s.RestartEvery || time.Until(end) < s.QuietTail {
				continue
			}
			op, err, lastRestart = "operator restart", s.Restart(), time.Now()
		}
		if err != nil {
			return counts, fmt.Errorf("%s: %w", op, err)
		}
		counts[op]++
		time.Sleep(s.Every)
	}
	for i := range deleted {
		if err := s.create(ctx, objs[i]); err != nil {
			return counts, fmt.Errorf("re-create: %w", err)
		}
		counts["re-create"]++
	}
	if s.Logf != nil {
		s.Logf("soak: %s", counts)
	}
	return counts, nil
}

// create creates a fresh copy of o, once an earlier one being deleted is
// gone.
func (s Soak) create(ctx context.Context, o client.Object) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		fresh := o.DeepCopyObject().(client.Object)
		fresh.SetResourceVersion("")
		fresh.SetUID("")
		err := s.Client.Create(ctx, fresh)
		if err == nil || !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (s Soak) editSpec(ctx context.Context, o client.Object, n int) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		switch cr := o.(type) {
		case *llamav1alpha1.LlamaStackDistribution:
			cr.Spec.Server.ContainerSpec.Env = []corev1.EnvVar{{Name: "EDIT", Value: fmt.Sprint(n)}}
		case *trustyv1.TrustyAIService:
			cr.Spec.Metrics.Schedule = fmt.Sprintf("%ds", 5+n%50)
		}
		return s.Client.Update(ctx, o)
	})
	return client.IgnoreNotFound(err)
}

func (s Soak) editConfigMap(ctx context.Context, next func(int) (*corev1.ConfigMap, error), n int) error {
	want, err := next(n)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(want), cm); err != nil {
			return err
		}
		cm.Data = want.Data
		return s.Client.Update(ctx, cm)
	})
}
