package framework

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// docBlock is a fenced shell block after a `<!-- run by test: NAME -->` marker.
var docBlock = regexp.MustCompile("(?s)<!-- run by test: ([a-z0-9-]+) -->\\s*```sh\\n(.*?)```")

// DocCommands returns the shell blocks a document marks for tests, by name.
func DocCommands(t testing.TB, doc string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), doc))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range docBlock.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// RunDocCommand runs the block a document marks with name, as written, with
// bash in the repository's root against the cluster of kubeconfig, and
// returns its output; a failure fails the test. The control plane's
// binaries (KUBEBUILDER_ASSETS: kubectl among them) come first in its PATH.
func RunDocCommand(t testing.TB, doc, name, kubeconfig string) string {
	t.Helper()
	script, ok := DocCommands(t, doc)[name]
	if !ok {
		t.Fatalf("%s marks no block %q (<!-- run by test: %s -->)", doc, name, name)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		cmd.Env = append(cmd.Env, "PATH="+assets+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s, block %q:\n%s\nfailed: %v\n%s", doc, name, script, err, out)
	}
	return string(out)
}

// AdminKubeconfig writes a kubeconfig of cfg's credentials (the cluster
// administrator's), for commands a test runs as a user would.
func AdminKubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	return writeKubeconfig(t, cfg, &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData})
}

// writeKubeconfig writes a kubeconfig of cfg's cluster with the user's credentials.
func writeKubeconfig(t testing.TB, cfg *rest.Config, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: len(cfg.CAData) == 0}
	kc.AuthInfos["u"] = user
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "x"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
