package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/config/crd"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/controller"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
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
}

func renderCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "file with one or more CRs (YAML); - reads standard input")
	opts := renderOptions{}
	fs.StringVar(&opts.watchesFile, "watches-file", "watches.yaml", "path of the watches file (kind -> embedded chart)")
	fs.BoolVar(&opts.openshift, "openshift", false, "render for OpenShift (the route.openshift.io API exists)")
	var apis stringList
	fs.Var(&apis, "api-versions", "extra API versions the cluster serves, comma separated (e.g. monitoring.coreos.com/v1)")
	fs.StringVar(&opts.kubeVersion, "kube-version", render.DefaultKubeVersion, "Kubernetes version to render for")
	fs.StringVar(&opts.namespace, "namespace", "default", "namespace of CRs that name none")
	fs.StringVar(&opts.operatorNamespace, "operator-namespace", "ai-stack-operator-system", "the operator's namespace (allowed through NetworkPolicies)")
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
	in := stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	return renderCRs(in, stdout, opts)
}

// capabilityLine says which optional APIs the render assumed.
func capabilityLine(apis []string) string {
	has := func(gv string) string {
		for _, a := range apis {
			if a == gv || strings.HasPrefix(a, gv+"/") {
				return "yes"
			}
		}
		return "no"
	}
	return fmt.Sprintf("route.openshift.io/v1: %s, monitoring.coreos.com/v1: %s", has("route.openshift.io/v1"), has("monitoring.coreos.com/v1"))
}

// renderCRs renders every CR of the input through the same translation and
// chart as the operator, and writes the manifests, each CR's after a comment.
func renderCRs(in io.Reader, out io.Writer, opts renderOptions) error {
	ws, err := watches.Load(opts.watchesFile)
	if err != nil {
		return err
	}
	crds, err := crd.All()
	if err != nil {
		return err
	}
	defaulter, err := render.NewDefaulter(crds)
	if err != nil {
		return err
	}
	apis := append([]string(nil), opts.apiVersions...)
	if opts.openshift {
		apis = append(apis, render.OpenShiftAPIVersions...)
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
		var w *watches.Watch
		for i := range ws {
			if ws[i].GroupVersionKind() == gvk {
				w = &ws[i]
			}
		}
		if w == nil {
			// Files often carry what a CR refers to (ConfigMaps, Secrets): say so and go on.
			fmt.Fprintf(&buf, "# skipped document %d: %s %s is not a kind this operator serves\n", docs, gvk.GroupVersion().WithKind(gvk.Kind).String(), u.GetName())
			continue
		}
		count++
		if u.GetName() == "" {
			return fmt.Errorf("document %d: metadata.name is required", docs)
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(opts.namespace)
		}
		defaulter.Default(u)
		kind, err := controller.KindFor(*w, controller.KindDeps{OperatorNamespace: opts.operatorNamespace})
		if err != nil {
			return err
		}
		inputs, err := kind.OfflineInputs(apis)
		if err != nil {
			return err
		}
		obj := kind.NewObject()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
		vals, err := kind.Values(obj, inputs)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
		c, err := charts.Load(w.Chart)
		if err != nil {
			return err
		}
		manifest, err := render.Render(c.Chart, vals, render.Options{
			ReleaseName: naming.ReleaseName(kind.ReleasePrefix(), obj.GetName()),
			Namespace:   obj.GetNamespace(),
			KubeVersion: opts.kubeVersion,
			APIVersions: apis,
		})
		if err != nil {
			return fmt.Errorf("%s %s: render chart %s: %w", gvk.Kind, u.GetName(), w.Chart, err)
		}
		fmt.Fprintf(&buf, "# %s %s/%s (chart %s; %s)\n%s", gvk.Kind, obj.GetNamespace(), obj.GetName(), w.Chart, capabilityLine(apis), manifest)
	}
	if count == 0 {
		return fmt.Errorf("the input holds no CR of a kind this operator serves (%d documents read)", docs)
	}
	_, err = out.Write(buf.Bytes())
	return err
}
