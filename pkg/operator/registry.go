package operator

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	evalhubv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1alpha1"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	trustyv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/evalhub"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/nemoguardrails"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/trustyai"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/version"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

// Deps are what the kinds need from the running operator.
type Deps = release.Deps

// entry is one kind of the registry: everything the operator needs to serve
// it. A kind the release reconciler renders through its chart has meta and
// new; a kind with a controller of its own (LMEvalJob runs to completion)
// has own instead.
type entry struct {
	addToScheme func(*runtime.Scheme) error
	meta        func() release.Meta
	new         func(Deps) release.Registered
	own         *ownController
}

// registry lists every kind the operator serves. Adding a kind is an API
// package, a kind package with its chart and samples, and one entry here
// (docs/adding-a-kind.md).
var registry = []entry{
	{
		addToScheme: llamav1alpha1.AddToScheme,
		meta:        llamastack.Meta,
		new: func(d Deps) release.Registered {
			return release.Register[*llamav1alpha1.LlamaStackDistribution, *llamastack.Inputs](&llamastack.Kind{Deps: d, OperatorVersion: version.Version})
		},
	},
	{
		addToScheme: ogxv1beta1.AddToScheme,
		meta:        ogx.Meta,
		new: func(d Deps) release.Registered {
			return release.Register[*ogxv1beta1.OGXServer, *ogx.Inputs](&ogx.Kind{Deps: d, OperatorVersion: version.Version})
		},
	},
	{
		addToScheme: func(s *runtime.Scheme) error {
			return errors.Join(trustyv1.AddToScheme(s), trustyv1alpha1.AddToScheme(s))
		},
		meta: trustyai.Meta,
		new: func(d Deps) release.Registered {
			return release.Register[*trustyv1.TrustyAIService, *trustyai.Inputs](&trustyai.Kind{Deps: d})
		},
	},
	{
		addToScheme: nemov1alpha1.AddToScheme,
		meta:        nemoguardrails.Meta,
		new: func(d Deps) release.Registered {
			return release.Register[*nemov1alpha1.NemoGuardrails, *nemoguardrails.Inputs](&nemoguardrails.Kind{Deps: d})
		},
	},
	{
		addToScheme: func(s *runtime.Scheme) error {
			return errors.Join(evalhubv1.AddToScheme(s), evalhubv1alpha1.AddToScheme(s))
		},
		meta: evalhub.Meta,
		new: func(d Deps) release.Registered {
			return release.Register[*evalhubv1.EvalHub, *evalhub.Inputs](&evalhub.Kind{Deps: d})
		},
	},
	{
		addToScheme: lmv1alpha1.AddToScheme,
		own:         lmevalJobController,
	},
}

// Scheme returns a scheme with the built-in types and every kind's API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	for _, e := range registry {
		if err := e.addToScheme(s); err != nil {
			panic(err)
		}
	}
	return s
}

// rendered is the registry's entries that the release reconciler renders.
func rendered() []entry {
	var out []entry
	for _, e := range registry {
		if e.meta != nil {
			out = append(out, e)
		}
	}
	return out
}

// The reconcile settings of every rendered kind unless a watches file says
// otherwise: every CR is re-checked this often even without events (drift
// on Routes and ServiceMonitors, which are not watched; an unchanged CR
// costs reads only), and Helm keeps this many revisions of each release.
const (
	DefaultReconcilePeriod   = 10 * time.Minute
	DefaultMaxReleaseHistory = 3
)

// Watches are the kinds the operator renders with their reconcile
// settings: every rendered kind of the registry with the defaults, or, when
// file is not "", the kinds the file lists with its settings (a watches
// file, kept for those who tune a kind or serve a subset; the chart is the
// kind's own, and a file that names another is refused).
func Watches(file string) ([]watches.Watch, error) {
	if file != "" {
		ws, err := watches.Load(file)
		if err != nil {
			return nil, err
		}
		for i, w := range ws {
			m, err := MetaFor(w)
			if err != nil {
				return nil, err
			}
			switch {
			case w.Chart == "":
				ws[i].Chart = m.Chart
			case w.Chart != m.Chart:
				return nil, fmt.Errorf("%s: %s is rendered by chart %s, not %s: leave chart out", file, m.GVK.Kind, m.Chart, w.Chart)
			}
		}
		return ws, nil
	}
	var out []watches.Watch
	for _, e := range rendered() {
		m := e.meta()
		out = append(out, watches.Watch{
			Group: m.GVK.Group, Version: m.GVK.Version, Kind: m.GVK.Kind, Chart: m.Chart,
			ReconcilePeriod:         &metav1.Duration{Duration: DefaultReconcilePeriod},
			MaxReleaseHistory:       DefaultMaxReleaseHistory,
			MaxConcurrentReconciles: watches.DefaultConcurrency(),
		})
	}
	return out, nil
}

// Metas describes every kind the release reconciler renders, in registry order.
func Metas() []release.Meta {
	var out []release.Meta
	for _, e := range rendered() {
		out = append(out, e.meta())
	}
	return out
}

// ServedKind is one kind the operator serves.
type ServedKind struct {
	GVK schema.GroupVersionKind
	// Chart is the embedded chart that renders it.
	Chart string
	// Rendered: the release reconciler renders it (else its own controller does).
	Rendered bool
}

// Served lists every kind the operator serves, rendered or with a
// controller of its own, in registry order: what every list of kinds
// elsewhere (tests, builders, checks) is derived from or checked against.
func Served() []ServedKind {
	var out []ServedKind
	for _, e := range registry {
		if e.own != nil {
			out = append(out, ServedKind{GVK: e.own.gvk, Chart: e.own.chart})
			continue
		}
		m := e.meta()
		out = append(out, ServedKind{GVK: m.GVK, Chart: m.Chart, Rendered: true})
	}
	return out
}

// lookup returns the registry entry of a watches entry's kind.
func lookup(w watches.Watch) (entry, error) {
	for _, e := range rendered() {
		if e.meta().GVK == w.GroupVersionKind() {
			return e, nil
		}
	}
	return entry{}, fmt.Errorf("the watches file lists %s, which this operator does not serve", w.GroupVersionKind())
}

// KindFor returns the kind of a watches entry.
func KindFor(w watches.Watch, d Deps) (release.Registered, error) {
	e, err := lookup(w)
	if err != nil {
		return nil, err
	}
	return e.new(d), nil
}

// MetaFor describes the kind of a watches entry, without building it.
func MetaFor(w watches.Watch) (release.Meta, error) {
	e, err := lookup(w)
	if err != nil {
		return release.Meta{}, err
	}
	return e.meta(), nil
}

// metas describes the kinds of the watches entries.
func metas(ws []watches.Watch) ([]release.Meta, error) {
	var out []release.Meta
	for _, w := range ws {
		m, err := MetaFor(w)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// RelatedImages are the images every kind deploys by default, by the name
// of the RELATED_IMAGE_ variable that overrides each: the CSV's
// relatedImages (what a mirroring tool copies for a disconnected cluster)
// and its Deployment's environment.
func RelatedImages() map[string]string {
	images := map[string]string{}
	for _, e := range registry {
		if e.own != nil {
			maps.Copy(images, e.own.relatedImages)
			continue
		}
		maps.Copy(images, e.meta().RelatedImages)
	}
	return images
}

// OptionalAPIs is the union of the rendered kinds' optional APIs, in registry order.
func OptionalAPIs() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, m := range Metas() {
		for _, gvk := range m.OptionalAPIs {
			if !slices.Contains(out, gvk) {
				out = append(out, gvk)
			}
		}
	}
	return out
}
