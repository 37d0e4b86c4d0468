package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/config/crd"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/admission"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	lmevalcontroller "github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval/controller"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/convert"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

type renderOptions struct {
	watchesFile string
	openshift   bool
	apiVersions []string
	kubeVersion string
	namespace   string
	// operatorNamespace is let through NetworkPolicies.
	operatorNamespace string
	// configMaps are the operator's settings ConfigMaps (--settings), data by name.
	configMaps map[string]map[string]string
	// unguarded skips the guard, so that tests can check the chart's own
	// quoting apart from the guard behind it.
	unguarded bool
}

func renderCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "file with one or more CRs (YAML); - reads standard input")
	opts := renderOptions{}
	fs.StringVar(&opts.watchesFile, "watches-file", "", "a watches file of reconcile settings per kind, as the operator takes; empty: every kind")
	fs.BoolVar(&opts.openshift, "openshift", false, "render for OpenShift (the route.openshift.io API exists)")
	var apis stringList
	fs.Var(&apis, "api-versions", "extra API versions the cluster serves, comma separated (e.g. monitoring.coreos.com/v1)")
	fs.StringVar(&opts.kubeVersion, "kube-version", render.DefaultKubeVersion, "Kubernetes version to render for")
	fs.StringVar(&opts.namespace, "namespace", "default", "namespace of CRs that name none")
	fs.StringVar(&opts.operatorNamespace, "operator-namespace", "ai-stack-operator-system", "the operator's namespace (allowed through NetworkPolicies)")
	toOGX := fs.Bool("to-ogxserver", false, "convert the LlamaStackDistributions of the file to OGXServers (ogx.io/v1beta1) and print the file, instead of rendering; what has no counterpart is a comment and a warning")
	var convertOpts convert.Options
	fs.StringVar(&convertOpts.Suffix, "ogxserver-suffix", convert.DefaultSuffix, "with --to-ogxserver: added to each name (an OGXServer adopts the old claim and Service only under another name)")
	fs.BoolVar(&convertOpts.NoAdopt, "no-adopt", false, "with --to-ogxserver: leave out the adoption annotations (ogx.io/adopt-storage, ogx.io/adopt-networking)")
	settingsFile := fs.String("settings", "", "file of the operator's settings ConfigMaps (YAML: "+settingsConfigMap+", and the upstream operators' that the kinds read) to render with")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "render needs -f FILE (or -f - for standard input)")
		fs.Usage()
		return errUsage
	}
	opts.apiVersions = apis
	if *settingsFile != "" {
		cms, err := readConfigMaps(*settingsFile)
		if err != nil {
			return err
		}
		opts.configMaps = cms
	}
	in := stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	if *toOGX {
		return convertToOGX(in, stdout, stderr, convertOpts)
	}
	return renderCRs(in, stdout, opts)
}

// settingsConfigMap is the operator's default settings ConfigMap name.
const settingsConfigMap = "ai-stack-operator-config"

// readConfigMaps reads the ConfigMaps of a YAML file: data by name.
func readConfigMaps(file string) (map[string]map[string]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("--settings %s: %w", file, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := sigsyaml.UnmarshalStrict(doc, cm); err != nil {
			return nil, fmt.Errorf("--settings %s, document %d: %w", file, i, err)
		}
		if cm.Kind != "ConfigMap" || cm.Name == "" {
			return nil, fmt.Errorf("--settings %s, document %d: not a named ConfigMap", file, i)
		}
		out[cm.Name] = cm.Data
	}
}

// capabilityLine says which of a kind's optional APIs the render assumed,
// one entry per group/version: "yes" when it serves every kind asked of it
// (Istio's DestinationRule and VirtualService are one entry).
func capabilityLine(optional []schema.GroupVersionKind, apis []string) string {
	caps := release.CapabilitiesFromAPIVersions(apis, optional)
	var order []string
	served := map[string]bool{}
	for _, gvk := range optional {
		gv := gvk.GroupVersion().String()
		if _, seen := served[gv]; !seen {
			order = append(order, gv)
			served[gv] = true
		}
		served[gv] = served[gv] && caps.Has(gvk)
	}
	parts := make([]string, 0, len(order))
	for _, gv := range order {
		answer := "no"
		if served[gv] {
			answer = "yes"
		}
		parts = append(parts, gv+": "+answer)
	}
	return strings.Join(parts, ", ")
}

// renderer renders CRs offline exactly as the operator would: admission as
// on the API server, the kind's translation, the embedded chart, and the
// guard the operator runs before it applies anything.
type renderer struct {
	opts      renderOptions
	ws        []watches.Watch
	admission *admission.Admission
	apis      []string
	charts    map[string]*charts.Chart
}

// crdAdmission is the admission of the embedded CRDs: parsed and compiled
// (their schemas and CEL rules) once per process, since they never change
// in it. A render command builds it once anyway; the tests, which render
// thousands of CRs in one process, spent most of their time here (418 s of
// cmd/render's tests beside the envtest suite, over Go's 10-minute test
// deadline with a loaded core; issue 52).
var crdAdmission = sync.OnceValues(func() (*admission.Admission, error) {
	crds, err := crd.All()
	if err != nil {
		return nil, err
	}
	return admission.NewAdmission(crds)
})

func newRenderer(opts renderOptions) (*renderer, error) {
	ws, err := operator.Watches(opts.watchesFile)
	if err != nil {
		return nil, err
	}
	admission, err := crdAdmission()
	if err != nil {
		return nil, err
	}
	apis := append([]string(nil), opts.apiVersions...)
	if opts.openshift {
		apis = append(apis, render.OpenShiftAPIVersions...)
	}
	r := &renderer{opts: opts, ws: ws, admission: admission, apis: apis, charts: map[string]*charts.Chart{}}
	for _, w := range ws {
		c, err := charts.Load(w.Chart)
		if err != nil {
			return nil, err
		}
		r.charts[w.Chart] = c
	}
	return r, nil
}

// watchFor returns the watches.yaml entry of a kind, in any version its CRD
// serves (a TrustyAIService of v1alpha1 as well as v1); nil when the kind
// is not served.
func (r *renderer) watchFor(gvk schema.GroupVersionKind) *watches.Watch {
	for i := range r.ws {
		if r.ws[i].GroupVersionKind().GroupKind() == gvk.GroupKind() && r.admission.Serves(gvk) {
			return &r.ws[i]
		}
	}
	return nil
}

// render renders one CR of a served kind and returns its manifest.
func (r *renderer) render(u *unstructured.Unstructured) (string, error) {
	gvk := u.GroupVersionKind()
	w := r.watchFor(gvk)
	if u.GetNamespace() == "" {
		u.SetNamespace(r.opts.namespace)
	}
	if err := r.admission.Admit(context.Background(), u); err != nil {
		return "", err
	}
	// The API server converts to the version the operator reads with the
	// CRD's strategy; every CRD here converts with None (same schemas).
	u.SetAPIVersion(w.GroupVersionKind().GroupVersion().String())
	kind, err := operator.KindFor(*w, operator.Deps{OperatorNamespace: r.opts.operatorNamespace, SettingsConfigMap: settingsConfigMap, OfflineConfigMaps: r.opts.configMaps})
	if err != nil {
		return "", err
	}
	meta := kind.Meta()
	obj := meta.NewObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		return "", err
	}
	inputs, err := kind.OfflineInputs(obj, release.CapabilitiesFromAPIVersions(r.apis, meta.OptionalAPIs))
	if err != nil {
		return "", err
	}
	vals, err := kind.Values(obj, inputs)
	if err != nil {
		return "", err
	}
	c := r.charts[w.Chart]
	manifest, err := render.Render(c.Chart, vals, render.Options{
		ReleaseName: naming.ReleaseName(meta.ReleasePrefix, obj.GetNamespace(), obj.GetName()),
		Namespace:   obj.GetNamespace(),
		KubeVersion: r.opts.kubeVersion,
		APIVersions: r.apis,
	})
	if err != nil {
		return "", fmt.Errorf("render chart %s: %w", w.Chart, err)
	}
	if r.opts.unguarded {
		return manifest, nil
	}
	if _, err := guard.Check(manifest, guard.Policy{Namespace: obj.GetNamespace(), Kinds: c.Kinds}); err != nil {
		return "", err
	}
	return manifest, nil
}

// renderLMEvalJob renders a job as the LMEvalJob controller makes its
// objects when its pod is due: admission, the kind's checks, its chart with
// the settings of --settings (no CA bundle: its sources are in the job's
// namespace, not read offline), owner references aside.
func (r *renderer) renderLMEvalJob(u *unstructured.Unstructured) (string, error) {
	if u.GetNamespace() == "" {
		u.SetNamespace(r.opts.namespace)
	}
	if err := r.admission.Admit(context.Background(), u); err != nil {
		return "", err
	}
	job := &lmv1alpha1.LMEvalJob{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, job, true); err != nil {
		return "", err
	}
	cm := r.opts.configMaps
	s, err := lmeval.ParseSettings(nil, cm[settingsConfigMap], cm[lmevalcontroller.UpstreamConfigMap], cm[lmeval.DSCConfigMap], "quay.io/ai-stack-operator/ai-stack-operator:"+version.Version)
	if err != nil {
		return "", err
	}
	if msg := lmeval.Validate(&job.Spec); msg != "" {
		return "", fmt.Errorf("the job would fail: Input validation failed: %s", msg)
	}
	vals, err := lmeval.Values(job, s, lmeval.PermitsFor(&job.Spec, s), lmevalcontroller.PodCacheLabels, "", nil)
	if err != nil {
		return "", err
	}
	c, err := charts.Load(lmeval.Chart)
	if err != nil {
		return "", err
	}
	manifest, err := render.Render(c.Chart, vals, render.Options{ReleaseName: job.Name, Namespace: job.Namespace, KubeVersion: r.opts.kubeVersion})
	if err != nil {
		return "", fmt.Errorf("render chart %s: %w", lmeval.Chart, err)
	}
	if !r.opts.unguarded {
		if _, err := guard.Check(manifest, guard.Policy{Namespace: job.Namespace, Kinds: c.Kinds}); err != nil {
			return "", err
		}
	}
	return manifest, nil
}

// renderCRs renders every CR of the input through the same translation and
// chart as the operator, and writes the manifests, each CR's after a comment.
func renderCRs(in io.Reader, out io.Writer, opts renderOptions) error {
	r, err := newRenderer(opts)
	if err != nil {
		return err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var buf bytes.Buffer
	count, docs := 0, 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return fmt.Errorf("document %d: %w", docs+1, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		docs++
		gvk := u.GroupVersionKind()
		if gvk.GroupKind() == lmv1alpha1.GroupVersion.WithKind(lmv1alpha1.Kind).GroupKind() && r.admission.Serves(gvk) {
			count++
			if u.GetName() == "" {
				return fmt.Errorf("document %d: metadata.name is required (render a generateName job with a name)", docs)
			}
			manifest, err := r.renderLMEvalJob(u)
			if err != nil {
				return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
			}
			fmt.Fprintf(&buf, "# %s %s/%s (chart %s)\n%s", gvk.Kind, u.GetNamespace(), u.GetName(), lmeval.Chart, manifest)
			continue
		}
		w := r.watchFor(gvk)
		if w == nil {
			// Files often carry what a CR refers to (ConfigMaps, Secrets): say so and go on.
			fmt.Fprintf(&buf, "# skipped document %d: %s %s is not a kind this operator serves\n", docs, gvk.GroupVersion().WithKind(gvk.Kind).String(), u.GetName())
			continue
		}
		count++
		if u.GetName() == "" {
			return fmt.Errorf("document %d: metadata.name is required", docs)
		}
		manifest, err := r.render(u)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
		meta, err := operator.MetaFor(*w)
		if err != nil {
			return err
		}
		fmt.Fprintf(&buf, "# %s %s/%s (chart %s; %s)\n%s", gvk.Kind, u.GetNamespace(), u.GetName(), w.Chart, capabilityLine(meta.OptionalAPIs, r.apis), manifest)
	}
	if count == 0 {
		return fmt.Errorf("the input holds no CR of a kind this operator serves (%d documents read)", docs)
	}
	_, err = out.Write(buf.Bytes())
	return err
}
