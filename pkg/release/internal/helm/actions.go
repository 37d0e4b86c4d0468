package helm

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Factory makes the release clients of the operator's CRs: every release
// record is a ConfigMap in the operator's namespace (the operator needs no
// Secret permission, and a tenant cannot edit the records its CR is
// applied from), and a CR's store holds its own records only (Owner).
type Factory struct {
	dynamic  dynamic.Interface
	mapper   meta.RESTMapper
	releases corev1client.ConfigMapInterface
	// prefixes are the kinds' release prefixes, by kind.
	prefixes map[string]string
}

// NewFactory is the factory of release clients for the kinds' release
// prefixes (by kind).
func NewFactory(cfg *rest.Config, mapper meta.RESTMapper, operatorNamespace string, prefixes map[string]string) (*Factory, error) {
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
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Factory{dynamic: dyn, mapper: mapper, releases: cs.CoreV1().ConfigMaps(operatorNamespace), prefixes: prefixes}, nil
}

// NewFactoryFor is a factory over given clients (tests).
func NewFactoryFor(dyn dynamic.Interface, mapper meta.RESTMapper, releases corev1client.ConfigMapInterface, prefixes map[string]string) *Factory {
	return &Factory{dynamic: dyn, mapper: mapper, releases: releases, prefixes: prefixes}
}

// For is the client of obj's release, for one reconcile (kind is obj's).
func (f *Factory) For(obj client.Object, kind string) (*Client, error) {
	prefix, ok := f.prefixes[kind]
	if !ok {
		return nil, fmt.Errorf("release storage: no release prefix for kind %q", kind)
	}
	return &Client{
		Store: NewStore(NewRecords(f.releases, OwnerOf(obj, kind, prefix))),
		Kube:  &Kube{Dynamic: f.dynamic, Mapper: f.mapper, Namespace: obj.GetNamespace()},
	}, nil
}
