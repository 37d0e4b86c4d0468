// Package charts embeds the operator's Helm charts, one per kind, so that the
// binary renders exactly what `helm template charts/<chart>` renders.
package charts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// AnnotationKinds in a chart's Chart.yaml lists every kind its templates may
// render (GroupKind form, comma separated); the operator applies nothing else.
const AnnotationKinds = "ai-stack-operator.io/kinds"

//go:embed all:llama-stack-distribution all:ogx-server all:trustyai-service all:lmeval-job all:nemo-guardrails all:eval-hub
var files embed.FS

// Chart is an embedded chart with a digest of its files.
type Chart struct {
	*chart.Chart
	// Digest is the hex SHA-256 over the chart's file names and contents, in
	// name order: it changes exactly when the chart's content changes.
	Digest string
	// Kinds are the kinds the chart declares (AnnotationKinds).
	Kinds []schema.GroupKind
}

// Load loads the embedded chart of the given name (a folder under charts/).
func Load(name string) (*Chart, error) {
	var buffered []*archive.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		buffered = append(buffered, &archive.BufferedFile{Name: strings.TrimPrefix(p, name+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chart %q is not embedded in this binary: %w", name, err)
	}
	sort.Slice(buffered, func(i, j int) bool { return buffered[i].Name < buffered[j].Name })
	h := sha256.New()
	for _, f := range buffered {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	c, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", name, err)
	}
	kinds, err := guard.ParseKinds(c.Metadata.Annotations[AnnotationKinds])
	if err != nil {
		return nil, fmt.Errorf("chart %q: annotation %s: %w", name, AnnotationKinds, err)
	}
	return &Chart{Chart: c, Digest: hex.EncodeToString(h.Sum(nil)), Kinds: kinds}, nil
}
