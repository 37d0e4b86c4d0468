package release

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
)

// Values converts a kind's typed values into the generic form Helm takes
// (and stores in a release): a JSON round trip, so that they compare equal
// to a stored release's.
func Values(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}

// ValuesOf is Values of a kind's translation, v and its error: a kind's
// Values method is `return release.ValuesOf(translate(cr, in.values))`.
func ValuesOf[V any](v V, err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	return Values(v)
}

// Releases makes the clients of the operator's releases: records as
// ConfigMaps in the operator's namespace, each CR's store holding its own
// records only, objects applied server-side under the field manager
// ManagedBy, no rollback of a failed upgrade (pkg/release/internal/helm).
type Releases struct {
	factory *helm.Factory
}

// NewReleases is the release clients of the kinds whose release prefixes
// are given (by kind), with records in operatorNamespace.
func NewReleases(cfg *rest.Config, mapper meta.RESTMapper, operatorNamespace string, prefixes map[string]string) (*Releases, error) {
	f, err := helm.NewFactory(cfg, mapper, operatorNamespace, prefixes)
	if err != nil {
		return nil, err
	}
	return &Releases{factory: f}, nil
}

// NewReleasesFor is NewReleases over given clients (tests).
func NewReleasesFor(dyn dynamic.Interface, mapper meta.RESTMapper, records corev1client.ConfigMapInterface, prefixes map[string]string) *Releases {
	return &Releases{factory: helm.NewFactoryFor(dyn, mapper, records, prefixes)}
}
