package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// Object is one object of a manifest, as it is applied, and the API
// resource that serves it.
type Object struct {
	*unstructured.Unstructured
	Mapping *meta.RESTMapping
}

// Namespaced says whether the object's kind lives in a namespace.
func (o *Object) Namespaced() bool {
	return o.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// Ref is "Kind namespace/name", as messages name an object.
func (o *Object) Ref() string {
	return o.Mapping.GroupVersionKind.Kind + " " + o.GetNamespace() + "/" + o.GetName()
}

// Kube reaches the objects of one CR's release: reads and writes go to the
// API server (never a cache), writes apply under the field manager
// ManagedBy.
type Kube struct {
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// Namespace is the release's: an object of a namespaced kind without
	// one is put there, as Helm's kube client does.
	Namespace string
}

// Build reads a manifest's objects, in its order, a List item by item (as
// Helm's kube client reads it). A document without an object (comments
// only) is skipped; an object of a kind the API server does not serve is an
// error (meta.IsNoMatchError).
func (k *Kube) Build(manifest string) ([]*Object, error) {
	var out []*Object
	for _, doc := range guard.Documents(manifest) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var content map[string]any
		if err := yaml.Unmarshal([]byte(doc), &content); err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		if len(content) == 0 {
			continue
		}
		items, isList := content["items"].([]any)
		if !isList || !strings.HasSuffix((&unstructured.Unstructured{Object: content}).GetKind(), "List") {
			items = []any{content}
		}
		for _, item := range items {
			c, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("read manifest: a list item is not an object")
			}
			o, err := k.object(c)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// object is one object of a manifest with its API resource.
func (k *Kube) object(content map[string]any) (*Object, error) {
	u := &unstructured.Unstructured{Object: content}
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("read manifest: an object without apiVersion or kind (%q)", u.GetName())
	}
	m, err := k.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	o := &Object{Unstructured: u, Mapping: m}
	if o.Namespaced() && u.GetNamespace() == "" {
		u.SetNamespace(k.Namespace)
	}
	return o, nil
}

func (k *Kube) resource(o *Object) dynamic.ResourceInterface {
	r := k.Dynamic.Resource(o.Mapping.Resource)
	if o.Namespaced() {
		return r.Namespace(o.GetNamespace())
	}
	return r
}

// Get reads the live object of o; nil when there is none.
func (k *Kube) Get(ctx context.Context, o *Object) (*unstructured.Unstructured, error) {
	live, err := k.resource(o).Get(ctx, o.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// Apply writes o as rendered. One that did not exist when it was read
// (live nil) is created: a create fails when someone made an object of the
// name since, which is then theirs (the next reconcile's gate says so),
// where an apply would have taken it over. One that exists is applied with
// server-side apply under ManagedBy, taking the fields it renders from any
// other manager (the gate checked that it is the operator's), with its UID
// as read: an object replaced since is refused (its UID is immutable), not
// overwritten. Fields written by updates and patches, by earlier versions
// of the operator (Helm 3's three-way merges, the gate's patches) and by
// its creates, are moved to the apply manager first, so that a field the
// chart stops rendering is removed.
func (k *Kube) Apply(ctx context.Context, o *Object, live *unstructured.Unstructured) error {
	if live == nil {
		if _, err := k.resource(o).Create(ctx, o.Unstructured, metav1.CreateOptions{FieldManager: ManagedBy}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Retried: the gate then reads whose it is.
				return fmt.Errorf("create %s: made by someone else since it was read: %s", o.Ref(), err.Error())
			}
			return fmt.Errorf("create %s: %w", o.Ref(), err)
		}
		return nil
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, csaManagers, ManagedBy)
	if err != nil {
		return fmt.Errorf("apply %s: move the fields of earlier writes: %w", o.Ref(), err)
	}
	if patch != nil {
		if _, err := k.resource(o).Patch(ctx, o.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("apply %s: move the fields of earlier writes: %w", o.Ref(), err)
		}
	}
	body := o.DeepCopy()
	body.SetUID(live.GetUID())
	data, err := json.Marshal(body.Object)
	if err != nil {
		return err
	}
	if _, err := k.resource(o).Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: ManagedBy, Force: ptr.To(true)}); err != nil {
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "metadata.uid") {
			// Retried: the gate then reads whose it is.
			return fmt.Errorf("apply %s: replaced since it was read: %s", o.Ref(), err.Error())
		}
		return fmt.Errorf("apply %s: %w", o.Ref(), err)
	}
	return nil
}

// csaManagers are the field managers of updates, creates and patches: the
// operator's own (ManagedBy: its creates and the gate's patches, and Helm
// 3's kube client in earlier versions) and the binary's name (earlier
// versions' gate and drift repair patches).
var csaManagers = sets.New(ManagedBy, "manager")

// MergePatch sends a JSON merge patch of o's object under ManagedBy and
// returns the object patched.
func (k *Kube) MergePatch(ctx context.Context, o *Object, patch []byte) (*unstructured.Unstructured, error) {
	return k.resource(o).Patch(ctx, o.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ManagedBy})
}

// Delete deletes o's object when its UID is uid, in the background.
func (k *Kube) Delete(ctx context.Context, o *Object, uid types.UID) error {
	background := metav1.DeletePropagationBackground
	return k.resource(o).Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
}
