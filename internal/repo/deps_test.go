// Package repo tests the repository itself: its module requirements and
// the configuration that keeps them current.
package repo

import (
	"encoding/json"
	"os"
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
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string][]string{}
	for _, r := range f.Require {
		p := r.Mod.Path
		// kube-openapi and utils have no releases (pseudo-versions).
		if strings.HasPrefix(p, "k8s.io/") && p != "k8s.io/kube-openapi" && p != "k8s.io/utils" && p != "k8s.io/klog/v2" {
			versions[r.Mod.Version] = append(versions[r.Mod.Version], p)
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
	tools, err := os.ReadFile(filepath.Join(root, "hack", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^oldest_version=v(\d+\.\d+)\.\d+$`).FindSubmatch(tools)
	if m == nil {
		t.Fatal("hack/tools.sh sets no oldest_version=vX.Y.Z")
	}
	csv, err := os.ReadFile(filepath.Join(root, "config", "manifests", "bases", "ai-stack-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	min := regexp.MustCompile(`(?m)^  minKubeVersion: (\d+\.\d+)\.\d+$`).FindSubmatch(csv)
	if min == nil {
		t.Fatal("the CSV sets no minKubeVersion")
	}
	if string(m[1]) != string(min[1]) {
		t.Errorf("the CSV claims Kubernetes %s and later, the oldest tested is %s", min[1], m[1])
	}
}
