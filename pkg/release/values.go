package release

import (
	"encoding/json"
	"fmt"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"k8s.io/apimachinery/pkg/api/meta"
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

// NewActionClientGetter returns the Helm action clients of the operator's
// releases: records as ConfigMaps in operatorNamespace, each CR's storage
// holding its own records only (prefixes are the kinds' release prefixes,
// by kind), the field manager ManagedBy, no rollback of a failed upgrade
// (pkg/release/internal/helm).
func NewActionClientGetter(cfg *rest.Config, mapper meta.RESTMapper, operatorNamespace string, prefixes map[string]string) (helmclient.ActionClientGetter, error) {
	return helm.NewActionClientGetter(cfg, mapper, operatorNamespace, prefixes)
}
