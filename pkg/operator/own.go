package operator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	lmevalcontroller "github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval/controller"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// ownController is a registry entry's kind with a controller of its own, as
// kueue's job integrations are: what it caches and how it is set up.
type ownController struct {
	gvk schema.GroupVersionKind
	// chart is the embedded chart its controller renders.
	chart string
	// relatedImages are the images it deploys, as release.Meta's.
	relatedImages map[string]string
	// enabled says whether the options ask for the kind.
	enabled func(ManagerOptions) bool
	// cache adds what the controller caches to the manager's cache options.
	cache func(*cache.Options)
	// setup adds the controller to the manager.
	setup func(ownSetup) error
}

// ownSetup is what an ownController's setup is given.
type ownSetup struct {
	mgr       ctrl.Manager
	deps      Deps
	opts      ManagerOptions
	discovery discovery.DiscoveryInterface
	cache     cache.Options
}

// lmevalJobController serves LMEvalJob, a job that runs to completion
// outside the release reconciler.
var lmevalJobController = &ownController{
	gvk:   lmv1alpha1.GroupVersion.WithKind("LMEvalJob"),
	chart: lmeval.Chart,
	// The job's pod image; its driver is the operator's own image.
	relatedImages: map[string]string{lmeval.EnvPodImage: lmeval.DefaultPodImage},
	enabled:       func(o ManagerOptions) bool { return o.LMEvalJobs },
	cache: func(c *cache.Options) {
		// The jobs' pods: only the operator's are cached.
		c.ByObject[&corev1.Pod{}] = cache.ByObject{Label: labels.SelectorFromSet(lmevalcontroller.PodCacheLabels)}
	},
	setup: func(s ownSetup) error {
		c, err := charts.Load(lmeval.Chart)
		if err != nil {
			return err
		}
		kueue := release.NewCapabilityDetector(s.discovery, s.discovery, s.opts.CapabilityTTL, []release.Meta{{OptionalAPIs: lmevalcontroller.KueueAPIs()}})
		r := &lmevalcontroller.Reconciler{Deps: s.deps, DriverImage: s.opts.DriverImage, Chart: c,
			Kueue: &lmevalcontroller.Kueue{Served: kueue.Capabilities, Mapper: s.mgr.GetRESTMapper(), Add: s.mgr.Add,
				NewCache: func() (cache.Cache, error) {
					// Kueue's Workloads, once Kueue is found: the operator's only.
					return cache.New(s.mgr.GetConfig(), cache.Options{Scheme: s.mgr.GetScheme(), Mapper: s.mgr.GetRESTMapper(),
						DefaultNamespaces: s.cache.DefaultNamespaces, DefaultLabelSelector: labels.SelectorFromSet(lmevalcontroller.PodCacheLabels)})
				}}}
		return r.SetupWithManager(s.mgr)
	},
}

// owned is the registry's kinds with controllers of their own that the
// options ask for and the API server serves. One whose CRD is not installed
// (an older config/crd, or a cluster that leaves the kind to another
// operator) is left out with a log line: the operator serves the other kinds
// rather than failing to start.
func owned(o ManagerOptions, dc discovery.DiscoveryInterface) []*ownController {
	var out []*ownController
	for _, e := range registry {
		c := e.own
		if c == nil || !c.enabled(o) {
			continue
		}
		if !crdServed(dc, c.gvk) {
			ctrl.Log.WithName("setup").Info(fmt.Sprintf("%s is not served: its CRD is not installed (install config/crd, or pass --serve-%s=false to silence this)", c.gvk.Kind, strings.ToLower(c.gvk.Kind)))
			continue
		}
		out = append(out, c)
	}
	return out
}

// crdServed tells whether the API server serves the kind.
func crdServed(dc discovery.DiscoveryInterface, gvk schema.GroupVersionKind) bool {
	l, err := dc.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return false
	}
	for _, r := range l.APIResources {
		if r.Kind == gvk.Kind {
			return true
		}
	}
	return false
}
