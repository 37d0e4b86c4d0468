package release

import (
	"context"
	"fmt"
	"net/http"
	"os"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/cabundle"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Deps are what every kind needs from the running operator; kinds embed
// them. The zero value (with OperatorNamespace) serves offline rendering.
type Deps struct {
	// Client is the manager's client: it writes, and reads the rendered
	// objects through the label-limited cache.
	Client client.Client
	// APIReader reads what the caches do not hold (ConfigMaps, Routes).
	APIReader client.Reader
	// Recorder records events.
	Recorder record.EventRecorder
	// Capabilities tells which optional APIs the cluster serves.
	Capabilities func() (Capabilities, error)
	// OperatorNamespace and SettingsConfigMap locate the operator's settings
	// ("" for none).
	OperatorNamespace, SettingsConfigMap string
	// Environ is the process environment (RELATED_IMAGE_*); os.Environ when nil.
	Environ func() []string
	// Bundles is the CA bundle store's cache: the bundle ConfigMaps the
	// operator wrote and the last merges (nil: bundles are read whole and
	// merged every time).
	Bundles *cabundle.Cache
	// ConfigMapMetadata reads the cache of ConfigMap metadata that the
	// reconcilers watch (nil: none). An optional ConfigMap that it does not
	// hold is not asked for: see cachedAbsent.
	ConfigMapMetadata client.Reader
	// HTTPClient reaches the servers the kinds run, for what they say of
	// themselves in status (nil: a client with the kinds' own timeouts).
	HTTPClient *http.Client
	// OfflineConfigMaps are the data of the operator namespace's ConfigMaps
	// by name, for rendering without a cluster (render --settings); read
	// only when there is no APIReader.
	OfflineConfigMaps map[string]map[string]string
}

// Env is the process environment.
func (d Deps) Env() []string {
	if d.Environ != nil {
		return d.Environ()
	}
	return os.Environ()
}

// SettingsData reads the operator's settings ConfigMap: its data, nil when
// there is none.
func (d Deps) SettingsData(ctx context.Context) (map[string]string, error) {
	return d.OperatorConfigMapData(ctx, d.SettingsConfigMap)
}

// OperatorConfigMapData reads a ConfigMap of the operator's namespace (its
// settings, or the one an upstream operator read there): its data, nil when
// there is none, or no name or namespace is known. Offline (no APIReader)
// it is OfflineConfigMaps' entry.
func (d Deps) OperatorConfigMapData(ctx context.Context, name string) (map[string]string, error) {
	if name == "" || d.OperatorNamespace == "" {
		return nil, nil
	}
	if d.APIReader == nil {
		return d.OfflineConfigMaps[name], nil
	}
	if cabundle.KnownAbsent(ctx, d.ConfigMapMetadata, client.ObjectKey{Namespace: d.OperatorNamespace, Name: name}) {
		return nil, nil
	}
	cm, err := GetOptional(ctx, d.APIReader, d.OperatorNamespace, name, &corev1.ConfigMap{})
	if err != nil || cm == nil {
		return nil, err
	}
	return cm.Data, nil
}

// SharedConfigMaps is what every CR reads, for release.ConfigMapReader: the
// settings ConfigMap.
func (d Deps) SharedConfigMaps() []string { return d.SharedConfigMapsWith() }

// SharedConfigMapsWith is SharedConfigMaps with the named ConfigMaps of the
// operator's namespace that a kind reads too (an upstream operator's).
func (d Deps) SharedConfigMapsWith(also ...string) []string {
	if d.OperatorNamespace == "" {
		return nil
	}
	var out []string
	for _, name := range append([]string{d.SettingsConfigMap}, also...) {
		if name != "" {
			out = append(out, d.OperatorNamespace+"/"+name)
		}
	}
	return out
}

// Bundle is the store of the merged CA bundles of CRs of the owner kind.
func (d Deps) Bundle(owner schema.GroupVersionKind) cabundle.Store {
	return cabundle.Store{Client: d.Client, Reader: d.APIReader, Recorder: d.Recorder, Owner: owner, Cache: d.Bundles, Metadata: d.ConfigMapMetadata, ManagedLabel: LabelManaged}
}

// GetOptional reads an object; it returns nil without error when it does not exist.
func GetOptional[T client.Object](ctx context.Context, reader client.Reader, ns, name string, obj T) (T, error) {
	var zero T
	err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err):
		return zero, nil
	default:
		return zero, fmt.Errorf("read %T %s/%s: %w", obj, ns, name, err)
	}
}

// ExternalURL is where the release's server is reached from outside the
// cluster: its Route's URL (read with the API reader: the Route API is
// optional and not cached) or, where it renders none, its Ingress's; ""
// while none is known or nothing exposes it.
func ExternalURL(ctx context.Context, d Deps, ns string, obs Observation) (string, error) {
	switch {
	case obs.Find("Route") != "":
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(platform.Route)
		route, err := GetOptional(ctx, d.APIReader, ns, obs.Find("Route"), u)
		if err != nil {
			return "", err
		}
		return status.RouteURL(route), nil
	case obs.Find("Ingress") != "":
		ing, err := GetRendered(ctx, d, ns, obs.Find("Ingress"), &networkingv1.Ingress{})
		if err != nil {
			return "", err
		}
		return status.IngressURL(ing), nil
	}
	return "", nil
}

// Rendered reads the release's object of a kind (the first of its
// manifest) as GetRendered does; nil when the release renders none.
func Rendered[T client.Object](ctx context.Context, d Deps, ns string, obs Observation, kind string, obj T) (T, error) {
	name := obs.Find(kind)
	if name == "" {
		var zero T
		return zero, nil
	}
	return GetRendered(ctx, d, ns, name, obj)
}

// GetRendered reads an object the release renders: from the cache, and from
// the API server when the cache does not hold it (yet: right after the
// install created it), so that the first status a CR gets describes the
// objects as they are and is not written again a moment later. nil without
// error when it does not exist.
func GetRendered[T client.Object](ctx context.Context, d Deps, ns, name string, obj T) (T, error) {
	got, err := GetOptional(ctx, d.Client, ns, name, obj)
	var zero T
	if err != nil || any(got) != any(zero) || d.APIReader == nil {
		return got, err
	}
	return GetOptional(ctx, d.APIReader, ns, name, obj)
}
