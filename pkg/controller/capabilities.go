package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

// defaultCapabilityTTL bounds how stale detection may be: an API installed
// later (the Route API, the Prometheus operator) is picked up within it.
const defaultCapabilityTTL = time.Minute

// capabilityDetector tells which optional APIs the cluster serves, through
// the manager's REST mapper, remembering the answer for capabilityTTL.
type capabilityDetector struct {
	mapper meta.RESTMapper
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	checked time.Time
	last    values.Capabilities
}

func newCapabilityDetector(mapper meta.RESTMapper, ttl time.Duration) *capabilityDetector {
	if ttl <= 0 {
		ttl = defaultCapabilityTTL
	}
	return &capabilityDetector{mapper: mapper, ttl: ttl, now: time.Now}
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
