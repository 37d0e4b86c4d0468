// Package repo tests the repository itself: its module requirements and
// the configuration that keeps them current.
package repo

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// Kubernetes' modules are on one release: client-go of one release with
// apimachinery of another is a skew nobody supports, and controller-runtime
// is made for one release.
func TestKubernetesModulesAreOnOneRelease(t *testing.T) {
	versions := map[string][]string{}
	for p, v := range requirements(t, filepath.Join(root, "go.mod")) {
		// kube-openapi and utils have no releases (pseudo-versions).
		if strings.HasPrefix(p, "k8s.io/") && p != "k8s.io/kube-openapi" && p != "k8s.io/utils" && p != "k8s.io/klog/v2" {
			versions[v] = append(versions[v], p)
		}
	}
	if len(versions) != 1 {
		t.Errorf("k8s.io modules on %d releases: %v", len(versions), versions)
	}
}

// renovate.json updates the k8s.io modules and controller-runtime as one
// group, so that no update splits them.
func TestDependencyUpdatesKeepKubernetesTogether(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "renovate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		PackageRules []struct {
			MatchPackageNames []string `json:"matchPackageNames"`
			GroupName         string   `json:"groupName"`
		} `json:"packageRules"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("renovate.json: %v", err)
	}
	for _, r := range cfg.PackageRules {
		if slices.Contains(r.MatchPackageNames, "k8s.io/**") && slices.Contains(r.MatchPackageNames, "sigs.k8s.io/controller-runtime") && r.GroupName != "" {
			return
		}
	}
	t.Error("renovate.json has no rule grouping k8s.io/** with sigs.k8s.io/controller-runtime")
}

// The oldest Kubernetes the operator claims (the CSV's minKubeVersion) is the
// one make test-integration-oldest runs the integration suite against
// (hack/tools.sh's oldest_version): a claim is tested, not made.
func TestOldestSupportedKubernetesIsTested(t *testing.T) {
	oldest := toolsMinor(t, "oldest_version")
	csv, err := os.ReadFile(filepath.Join(root, "config", "manifests", "bases", "ai-stack-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	minVersion := regexp.MustCompile(`(?m)^  minKubeVersion: (\d+\.\d+)\.\d+$`).FindSubmatch(csv)
	if minVersion == nil {
		t.Fatal("the CSV sets no minKubeVersion")
	}
	if "1."+oldest != string(minVersion[1]) {
		t.Errorf("the CSV claims Kubernetes %s and later, the oldest tested is 1.%s", minVersion[1], oldest)
	}
}

// controller-runtime is of the release the k8s.io modules are on: each of
// its minors is made and tested for one Kubernetes release (its own go.mod
// says which), and a skew (v0.22 over client-go v0.35) is unsupported.
func TestControllerRuntimeIsMadeForTheKubernetesRelease(t *testing.T) {
	ours := requirements(t, filepath.Join(root, "go.mod"))
	out, err := exec.Command("go", "list", "-m", "-json", "sigs.k8s.io/controller-runtime").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/controller-runtime: %v", err)
	}
	var mod struct{ Version, GoMod string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	theirs := requirements(t, mod.GoMod)
	minor := func(v string) string { return strings.Join(strings.SplitN(v, ".", 3)[:2], ".") }
	if a, b := minor(ours["k8s.io/client-go"]), minor(theirs["k8s.io/client-go"]); a != b {
		t.Errorf("controller-runtime %s is made for client-go %s.x, the module requires %s", mod.Version, b, ours["k8s.io/client-go"])
	}
}

// requirements are a go.mod's required modules and their versions.
func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}

// The local cluster every test runs on (hack/tools.sh's k8s_version) is of
// the minor of the client-go the operator is built with: the newest
// Kubernetes the operator supports is the one it is tested and built for.
func TestLocalClusterIsOfTheClientsMinor(t *testing.T) {
	minor := toolsMinor(t, "k8s_version")
	client := requirements(t, filepath.Join(root, "go.mod"))["k8s.io/client-go"]
	if !strings.HasPrefix(client, "v0."+minor+".") {
		t.Errorf("the local cluster is Kubernetes 1.%s, client-go is %s", minor, client)
	}
}

// toolsMinor is the minor of the Kubernetes version hack/tools.sh sets in
// the variable name (name=v1.Y.Z).
func toolsMinor(t *testing.T, name string) string {
	t.Helper()
	tools, err := os.ReadFile(filepath.Join(root, "hack", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `=v1\.(\d+)\.\d+$`).FindSubmatch(tools)
	if m == nil {
		t.Fatalf("hack/tools.sh sets no %s=v1.Y.Z", name)
	}
	return string(m[1])
}
