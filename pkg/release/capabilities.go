package release

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	chartutil "helm.sh/helm/v4/pkg/chart/common"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Capabilities are the optional APIs the cluster serves, out of those the
// kinds ask about (Meta.OptionalAPIs).
type Capabilities struct {
	served map[schema.GroupVersionKind]bool
}

// NewCapabilities returns capabilities in which exactly the given APIs are served.
func NewCapabilities(served ...schema.GroupVersionKind) Capabilities {
	c := Capabilities{served: map[schema.GroupVersionKind]bool{}}
	for _, gvk := range served {
		c.served[gvk] = true
	}
	return c
}

// CapabilitiesFromAPIVersions are the optional APIs that a list of API
// versions ("group/version" or "group/version/Kind", as `helm template
// --api-versions` takes them) serves.
func CapabilitiesFromAPIVersions(apiVersions []string, optional []schema.GroupVersionKind) Capabilities {
	var served []schema.GroupVersionKind
	for _, gvk := range optional {
		gv := gvk.GroupVersion().String()
		if slices.Contains(apiVersions, gv) || slices.Contains(apiVersions, gv+"/"+gvk.Kind) {
			served = append(served, gvk)
		}
	}
	return NewCapabilities(served...)
}

// Has says whether the cluster serves the API.
func (c Capabilities) Has(gvk schema.GroupVersionKind) bool { return c.served[gvk] }

// APIVersions lists the served APIs the way Helm's .Capabilities.APIVersions
// holds them ("group/version" and "group/version/Kind"), sorted.
func (c Capabilities) APIVersions() []string {
	var out []string
	for gvk, on := range c.served {
		if on {
			out = append(out, gvk.GroupVersion().String(), gvk.GroupVersion().String()+"/"+gvk.Kind)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c Capabilities) with(gvk schema.GroupVersionKind, on bool) Capabilities {
	next := Capabilities{served: map[schema.GroupVersionKind]bool{}}
	for k, v := range c.served {
		next.served[k] = v
	}
	next.served[gvk] = on
	return next
}

// defaultCapabilityTTL bounds how stale detection may be: an API installed
// later (the Route API, the Prometheus operator) is picked up within it.
const defaultCapabilityTTL = time.Minute

// CapabilityDetector tells which of the kinds' optional APIs the cluster
// serves, through discovery (not the manager's REST mapper, which never
// forgets an API that was removed), remembering the answer for its TTL.
type CapabilityDetector struct {
	resources ResourceLister
	discovery discovery.ServerVersionInterface
	apis      []schema.GroupVersionKind
	ttl       time.Duration
	now       func() time.Time

	mu      sync.Mutex
	checked time.Time
	last    Capabilities
	// known is true once every API has been answered at least once.
	known   bool
	version *chartutil.KubeVersion
}

// ResourceLister is the part of discovery the detector uses.
type ResourceLister interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// NewCapabilityDetector detects the union of the kinds' optional APIs; the
// TTL is a minute when 0.
func NewCapabilityDetector(resources ResourceLister, dc discovery.ServerVersionInterface, ttl time.Duration, kinds []Meta) *CapabilityDetector {
	if ttl <= 0 {
		ttl = defaultCapabilityTTL
	}
	var apis []schema.GroupVersionKind
	for _, k := range kinds {
		for _, gvk := range k.OptionalAPIs {
			if !slices.Contains(apis, gvk) {
				apis = append(apis, gvk)
			}
		}
	}
	slices.SortFunc(apis, func(a, b schema.GroupVersionKind) int {
		return cmp.Compare(a.String(), b.String())
	})
	return &CapabilityDetector{resources: resources, discovery: dc, apis: apis, ttl: ttl, now: time.Now, last: NewCapabilities()}
}

// HelmCapabilities are the capabilities Helm renders with: the server's
// version and the default API versions plus the optional ones served.
// Handing them to Helm saves its full discovery of every API group on each
// install and upgrade.
func (d *CapabilityDetector) HelmCapabilities() (*chartutil.Capabilities, error) {
	caps, err := d.Capabilities()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.version == nil {
		v, err := d.discovery.ServerVersion()
		if err != nil {
			return nil, fmt.Errorf("read the server version: %w", err)
		}
		d.version = &chartutil.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor}
	}
	apis := append(chartutil.VersionSet{}, chartutil.DefaultVersionSet...)
	apis = append(apis, caps.APIVersions()...)
	return &chartutil.Capabilities{KubeVersion: *d.version, APIVersions: apis, HelmVersion: chartutil.DefaultCapabilities.HelmVersion}, nil
}

// Capabilities returns the detected capabilities, from discovery. Only a
// "not served" answer (404 for the group and version, or a list without the
// kind) means "absent", so a removed API is noticed within the TTL; any other
// discovery error keeps the last known answer (so a flaky API server does
// not switch a Route to an Ingress, or restart pods with other trust
// sources), and with no answer yet it is returned, so that the reconcile
// fails without an upgrade.
func (d *CapabilityDetector) Capabilities() (Capabilities, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known && d.now().Sub(d.checked) < d.ttl {
		return d.last, nil
	}
	next := d.last
	var errs []error
	for _, gvk := range d.apis {
		on, err := d.serves(gvk)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		next = next.with(gvk, on)
	}
	if len(errs) > 0 {
		if !d.known {
			return NewCapabilities(), fmt.Errorf("detect optional APIs: %w", errors.Join(errs...))
		}
		// Keep the last known answers for the APIs that could not be checked;
		// try again on the next call.
		d.last = next
		return d.last, nil
	}
	d.last, d.known, d.checked = next, true, d.now()
	return d.last, nil
}

// serves says whether the API exists; an error is neither yes nor no.
func (d *CapabilityDetector) serves(gvk schema.GroupVersionKind) (bool, error) {
	list, err := d.resources.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil // the group/version is not served
	case err != nil:
		return false, fmt.Errorf("discover %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind {
			return true, nil
		}
	}
	return false, nil
}
