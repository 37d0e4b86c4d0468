package operator

import (
	"errors"
	"fmt"
	"slices"

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

// entry is one kind of the registry: what it is, and how to build it.
type entry struct {
	addToScheme func(*runtime.Scheme) error
	meta        func() release.Meta
	new         func(Deps) release.Registered
}

// registry lists every kind the operator serves. Adding a kind is an API
// package, a chart, a kind package and one entry here.
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
	// LMEvalJob runs to completion, outside the release reconciler.
	if err := lmv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// lookup returns the registry entry of a watches.yaml entry's kind.
func lookup(w watches.Watch) (entry, error) {
	for _, e := range registry {
		if e.meta().GVK == w.GroupVersionKind() {
			return e, nil
		}
	}
	return entry{}, fmt.Errorf("watches.yaml lists %s, which this operator does not serve", w.GroupVersionKind())
}

// KindFor returns the kind of a watches.yaml entry.
func KindFor(w watches.Watch, d Deps) (release.Registered, error) {
	e, err := lookup(w)
	if err != nil {
		return nil, err
	}
	return e.new(d), nil
}

// MetaFor describes the kind of a watches.yaml entry, without building it.
func MetaFor(w watches.Watch) (release.Meta, error) {
	e, err := lookup(w)
	if err != nil {
		return release.Meta{}, err
	}
	return e.meta(), nil
}

// metas describes the kinds of the watches.yaml entries.
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

// OptionalAPIs is the union of the served kinds' optional APIs, in registry order.
func OptionalAPIs() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, e := range registry {
		for _, gvk := range e.meta().OptionalAPIs {
			if !slices.Contains(out, gvk) {
				out = append(out, gvk)
			}
		}
	}
	return out
}
