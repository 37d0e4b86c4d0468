package framework

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount ns/sa (a token from the TokenRequest API) to the cluster
// of cfg.
func ServiceAccountKubeconfig(t testing.TB, cfg *rest.Config, ns, sa string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return writeKubeconfig(t, cfg, &clientcmdapi.AuthInfo{Token: tok.Status.Token})
}

// RunAsCSV runs the operator's binary bin the way the CSV's Deployment runs
// it: its args (bind addresses off: several run on this machine) and env,
// with WATCH_NAMESPACE as OLM sets it from the operator group's targets and
// POD_NAMESPACE as the pod's namespace, with kubeconfig (a ServiceAccount's).
// stop ends it; a request it logged as forbidden fails the test (the CSV
// lacks a permission the code uses).
func RunAsCSV(t testing.TB, bin string, csv *operatorsv1alpha1.ClusterServiceVersion, kubeconfig, opNS string, targets []string) (stop func()) {
	t.Helper()
	c := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	env := map[string]string{"WATCH_NAMESPACE": strings.Join(targets, ",")}
	return RunAsContainer(t, bin, c, kubeconfig, opNS, env, "the CSV")
}

// RunAsContainer runs the operator's binary bin the way a pod runs its
// container c: its args (bind addresses off: several run on this machine)
// and env (overrides replacing the values of those it names; POD_NAMESPACE
// is opNS), with kubeconfig (a ServiceAccount's). stop ends it; a request it
// logged as forbidden fails the test (what grants the ServiceAccount its
// permissions, named by grantor, lacks one the code uses).
func RunAsContainer(t testing.TB, bin string, c corev1.Container, kubeconfig, opNS string, overrides map[string]string, grantor string) (stop func()) {
	t.Helper()
	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--health-probe-bind-address="), strings.HasPrefix(a, "--metrics-bind-address="):
			a = a[:strings.Index(a, "=")+1] + "0"
		}
		args = append(args, a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"KUBECONFIG=" + kubeconfig, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		v, override := overrides[e.Name]
		switch {
		case override:
			cmd.Env = append(cmd.Env, e.Name+"="+v)
		case e.Name == "POD_NAMESPACE":
			cmd.Env = append(cmd.Env, "POD_NAMESPACE="+opNS)
		case e.ValueFrom == nil:
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// It was stopped (or killed): how it ended says nothing.
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("operator's log:\n%s", Tail(logs.String(), 60))
		}
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "forbidden") {
				t.Errorf("the operator was refused something %s should grant: %s", grantor, line)
			}
		}
	}
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
