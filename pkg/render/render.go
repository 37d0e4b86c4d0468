// Package render renders an embedded chart offline, exactly as the operator's
// install or upgrade renders it, minus the owner references that are only
// known against a live object. It backs cmd/render, the golden tests and the
// operator's own releases (Manifest).
package render

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartv2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
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

// Render renders the chart with the values and returns the manifest as the
// operator stores it in the release: documents in Helm's install order. The
// values are checked against the chart's schema.
func Render(c *chart.Chart, vals map[string]any, opts Options) (string, error) {
	kv := opts.KubeVersion
	if kv == "" {
		kv = DefaultKubeVersion
	}
	kubeVersion, err := common.ParseKubeVersion(kv)
	if err != nil {
		return "", fmt.Errorf("kube version %q: %w", kv, err)
	}
	apis := append([]string(nil), opts.APIVersions...)
	sort.Strings(apis)
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kubeVersion
	caps.APIVersions = append(caps.APIVersions, apis...)
	m, err := Manifest(c, vals, opts.ReleaseName, opts.Namespace, caps, true)
	if err != nil {
		return "", err
	}
	return strings.TrimLeft(m, "\n"), nil
}

// Manifest renders the chart for a release as Helm's install does: the
// chart's kubeVersion checked against caps, the values coalesced with the
// chart's (and checked against its schema when validate is set), the
// templates rendered, NOTES.txt left out, and the documents in Helm's
// install order, each under a "# Source:" line. The operator runs no Helm
// hooks: a chart that renders one is refused.
func Manifest(c *chart.Chart, vals map[string]any, name, namespace string, caps *common.Capabilities, validate bool) (string, error) {
	if c.Metadata.KubeVersion != "" && !chartv2util.IsCompatibleRange(c.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return "", fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	if err := chartv2util.ProcessDependencies(c, vals); err != nil {
		return "", err
	}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, common.ReleaseOptions{Name: name, Namespace: namespace, Revision: 1, IsInstall: true}, caps, !validate)
	if err != nil {
		return "", err
	}
	files, err := engine.Render(c, top)
	if err != nil {
		return "", err
	}
	for k := range files {
		if path.Base(k) == "NOTES.txt" {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", err
	}
	if len(hooks) > 0 {
		// The operator runs no hooks, and hooks would bypass its gate.
		return "", fmt.Errorf("the chart rendered %d Helm hooks (the first: %s); the operator runs none", len(hooks), hooks[0].Path)
	}
	var b strings.Builder
	for _, m := range manifests {
		// Each document without its trailing white space, as Helm 3 wrote
		// it (Helm 4 keeps it): what earlier versions stored and applied,
		// so that a ConfigMap ending in a block scalar keeps its content
		// (and the pods that mount it their hash) across the move.
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, strings.TrimRightFunc(m.Content, unicode.IsSpace))
	}
	return b.String(), nil
}
