package controller

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// defaultCapabilityTTL bounds how stale detection may be: an API installed
// later (the Route API, the Prometheus operator) is picked up within it.
const defaultCapabilityTTL = time.Minute

// capabilityDetector tells which optional APIs the cluster serves, through
// discovery (not the manager's REST mapper, which never forgets an API that
// was removed), remembering the answer for capabilityTTL.
type capabilityDetector struct {
	resources resourceLister
	discovery discovery.ServerVersionInterface
	ttl       time.Duration
	now       func() time.Time

	mu      sync.Mutex
	checked time.Time
	last    values.Capabilities
	// known is true once every capability has been answered at least once.
	known   bool
	version *chartutil.KubeVersion
}

// resourceLister is the part of discovery the detector uses.
type resourceLister interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

func newCapabilityDetector(resources resourceLister, dc discovery.ServerVersionInterface, ttl time.Duration) *capabilityDetector {
	if ttl <= 0 {
		ttl = defaultCapabilityTTL
	}
	return &capabilityDetector{resources: resources, discovery: dc, ttl: ttl, now: time.Now}
}

// HelmCapabilities are the capabilities Helm renders with: the server's
// version and the API versions the charts look for. Handing them to Helm
// saves its full discovery of every API group on each install and upgrade.
func (d *capabilityDetector) HelmCapabilities() (*chartutil.Capabilities, error) {
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
	for _, opt := range []struct {
		on  bool
		gvk schema.GroupVersionKind
	}{{caps.Route, routeGVK}, {caps.ServiceMonitor, serviceMonitorGVK}, {caps.OpenShift, sccGVK}} {
		if opt.on {
			apis = append(apis, opt.gvk.GroupVersion().String(), opt.gvk.GroupVersion().String()+"/"+opt.gvk.Kind)
		}
	}
	return &chartutil.Capabilities{KubeVersion: *d.version, APIVersions: apis, HelmVersion: chartutil.DefaultCapabilities.HelmVersion}, nil
}

// Capabilities returns the detected capabilities, from discovery. Only a
// "not served" answer (404 for the group and version, or a list without the
// kind) means "absent", so a removed API is noticed within the TTL; any other
// discovery error keeps the last known answer (so
// a flaky API server does not switch a Route to an Ingress, or restart pods
// with other trust sources), and with no answer yet it is returned, so that
// the reconcile fails without an upgrade.
func (d *capabilityDetector) Capabilities() (values.Capabilities, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known && d.now().Sub(d.checked) < d.ttl {
		return d.last, nil
	}
	next := d.last
	var errs []error
	for _, c := range []struct {
		gvk schema.GroupVersionKind
		set *bool
	}{{routeGVK, &next.Route}, {serviceMonitorGVK, &next.ServiceMonitor}, {sccGVK, &next.OpenShift}} {
		on, err := d.serves(c.gvk)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*c.set = on
	}
	if len(errs) > 0 {
		if !d.known {
			return values.Capabilities{}, fmt.Errorf("detect optional APIs: %w", errors.Join(errs...))
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
func (d *capabilityDetector) serves(gvk schema.GroupVersionKind) (bool, error) {
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
