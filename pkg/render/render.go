// Package render renders an embedded chart offline, exactly as the operator's
// Helm install or upgrade would, minus the owner references that are only
// known against a live object. It backs cmd/render and the golden tests.
package render

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// DefaultKubeVersion is the Kubernetes version assumed offline.
const DefaultKubeVersion = "v1.37.0"

// OpenShiftAPIVersions are the API groups an OpenShift cluster adds that the charts look for.
var OpenShiftAPIVersions = []string{"route.openshift.io/v1", "route.openshift.io/v1/Route", "security.openshift.io/v1", "security.openshift.io/v1/SecurityContextConstraints"}

// Options describe the release and the cluster to render for.
type Options struct {
	ReleaseName string
	Namespace   string
	// KubeVersion defaults to DefaultKubeVersion.
	KubeVersion string
	// APIVersions are added to Helm's default capabilities (group/version and group/version/Kind).
	APIVersions []string
}

// Render renders the chart with the values and returns the manifest as Helm
// would store it in the release: documents in Helm's install order.
func Render(c *chart.Chart, vals map[string]any, opts Options) (string, error) {
	kv := opts.KubeVersion
	if kv == "" {
		kv = DefaultKubeVersion
	}
	kubeVersion, err := chartutil.ParseKubeVersion(kv)
	if err != nil {
		return "", fmt.Errorf("kube version %q: %w", kv, err)
	}
	cfg := &action.Configuration{
		Releases: storage.Init(driver.NewMemory()),
		Log:      func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = opts.ReleaseName
	install.Namespace = opts.Namespace
	install.KubeVersion = kubeVersion
	install.DisableHooks = true
	install.IncludeCRDs = false
	apis := append([]string(nil), opts.APIVersions...)
	sort.Strings(apis)
	install.APIVersions = chartutil.VersionSet(apis)

	rel, err := install.Run(c, vals)
	if err != nil {
		return "", err
	}
	if len(rel.Hooks) > 0 {
		// The operator runs no hooks, and hooks would bypass its guard.
		return "", fmt.Errorf("the chart rendered %d Helm hooks (the first: %s); the operator runs none", len(rel.Hooks), rel.Hooks[0].Path)
	}
	return strings.TrimLeft(rel.Manifest, "\n"), nil
}
