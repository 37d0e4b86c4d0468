package controller

import (
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// defaultCapabilityTTL bounds how stale detection may be: an API installed
// later (the Route API, the Prometheus operator) is picked up within it.
const defaultCapabilityTTL = time.Minute

// capabilityDetector tells which optional APIs the cluster serves, through
// the manager's REST mapper, remembering the answer for capabilityTTL.
type capabilityDetector struct {
	mapper    meta.RESTMapper
	discovery discovery.ServerVersionInterface
	ttl       time.Duration
	now       func() time.Time

	mu      sync.Mutex
	checked time.Time
	last    values.Capabilities
	version *chartutil.KubeVersion
}

func newCapabilityDetector(mapper meta.RESTMapper, dc discovery.ServerVersionInterface, ttl time.Duration) *capabilityDetector {
	if ttl <= 0 {
		ttl = defaultCapabilityTTL
	}
	return &capabilityDetector{mapper: mapper, discovery: dc, ttl: ttl, now: time.Now}
}

// HelmCapabilities are the capabilities Helm renders with: the server's
// version and the API versions the charts look for. Handing them to Helm
// saves its full discovery of every API group on each install and upgrade.
func (d *capabilityDetector) HelmCapabilities() (*chartutil.Capabilities, error) {
	caps := d.Capabilities()
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
	}{{caps.Route, routeGVK}, {caps.ServiceMonitor, serviceMonitorGVK}} {
		if opt.on {
			apis = append(apis, opt.gvk.GroupVersion().String(), opt.gvk.GroupVersion().String()+"/"+opt.gvk.Kind)
		}
	}
	return &chartutil.Capabilities{KubeVersion: *d.version, APIVersions: apis, HelmVersion: chartutil.DefaultCapabilities.HelmVersion}, nil
}

// Capabilities returns the detected capabilities.
func (d *capabilityDetector) Capabilities() values.Capabilities {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked.IsZero() && d.now().Sub(d.checked) < d.ttl {
		return d.last
	}
	d.last = values.Capabilities{Route: d.serves(routeGVK), ServiceMonitor: d.serves(serviceMonitorGVK)}
	d.checked = d.now()
	return d.last
}

func (d *capabilityDetector) serves(gvk schema.GroupVersionKind) bool {
	_, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}
