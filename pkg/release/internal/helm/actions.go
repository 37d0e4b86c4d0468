package helm

import (
	"context"
	"fmt"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewActionClientGetter returns Helm action clients that keep every release
// record as a ConfigMap in the operator's namespace (the operator needs no
// Secret permission, and a tenant cannot edit the records its CR is applied
// from), apply with the field manager ManagedBy, and never roll back a
// failed upgrade (it stays failed, reported in status, and is retried with
// backoff instead of looping through rollbacks). prefixes are the kinds'
// release prefixes, by kind: a CR's storage holds its own records only
// (Owner).
func NewActionClientGetter(cfg *rest.Config, mapper meta.RESTMapper, operatorNamespace string, prefixes map[string]string) (helmclient.ActionClientGetter, error) {
	// Helm names the field manager of what it applies after the binary unless
	// told otherwise; a rename of the binary must not change it.
	helmkube.ManagedFieldsManager = ManagedBy
	// Release records are ConfigMaps whose data is one long string:
	// protobuf carries it as it is, where JSON is scanned byte by byte at
	// both ends.
	storage := rest.CopyConfig(cfg)
	storage.ContentType = runtime.ContentTypeProtobuf
	storage.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(storage)
	if err != nil {
		return nil, err
	}
	releases := cs.CoreV1().ConfigMaps(operatorNamespace)
	acg, err := helmclient.NewActionConfigGetter(cfg, mapper,
		helmclient.StorageDriverMapper(func(_ context.Context, obj client.Object, _ *rest.Config) (driver.Driver, error) {
			kind := obj.GetObjectKind().GroupVersionKind().Kind
			prefix, ok := prefixes[kind]
			if !ok {
				return nil, fmt.Errorf("release storage: no release prefix for kind %q", kind)
			}
			return HoldPending(NewRecords(releases, OwnerOf(obj, kind, prefix))), nil
		}))
	if err != nil {
		return nil, fmt.Errorf("helm action config: %w", err)
	}
	actions, err := helmclient.NewActionClientGetter(acg, helmclient.WithFailureRollbacks(false))
	if err != nil {
		return nil, fmt.Errorf("helm action client: %w", err)
	}
	return actions, nil
}
