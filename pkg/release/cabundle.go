package release

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// CABundle is the I/O of a CR's merged CA bundle, a ConfigMap the operator
// writes itself (outside Helm) for the pods to mount: the kinds decide what
// goes in (trust.Resolve), this reads the sources and writes the result.
type CABundle struct {
	// Client writes the ConfigMap; Reader reads ConfigMaps from the API
	// server (they are never cached).
	Client   client.Client
	Reader   client.Reader
	Recorder record.EventRecorder
	// Owner is the CR's kind.
	Owner schema.GroupVersionKind
}

func (b CABundle) ownership(cr client.Object) guard.Ownership {
	return guard.Ownership{Label: LabelManaged, Owner: b.Owner.GroupKind(), Namespace: cr.GetNamespace(), Name: cr.GetName()}
}

// Stored reads the bundle ConfigMap of the name: the operator's (nil when
// absent), or conflict when a ConfigMap of that name is someone else's,
// which is neither mounted, nor overwritten, nor deleted.
func (b CABundle) Stored(ctx context.Context, cr client.Object, name string) (stored *corev1.ConfigMap, conflict, err error) {
	cm := &corev1.ConfigMap{}
	err = b.Reader.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read CA bundle ConfigMap %s: %w", name, err)
	}
	if conflict := b.ownership(cr).Check("ConfigMap "+cr.GetNamespace()+"/"+name, cm.Labels, cm.Annotations, cm.OwnerReferences); conflict != nil {
		return nil, conflict, nil
	}
	return cm, nil, nil
}

// Resolve merges the CA sources of the request, reading them from the API server.
func (b CABundle) Resolve(ctx context.Context, req trust.Request) (trust.Outcome, error) {
	return trust.Resolve(req, func(ns, name string) (*trust.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		err := b.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read ConfigMap %s/%s: %w", ns, name, err)
		}
		return &trust.ConfigMap{Data: cm.Data, BinaryData: cm.BinaryData}, nil
	})
}

// Write makes the bundle ConfigMap (stored is its current state, nil when
// absent) hold the outcome's bundle, or removes it when no CA source applies
// any more. On a failed merge it leaves the last good bundle alone. labels
// are the ConfigMap's labels besides LabelManaged.
func (b CABundle) Write(ctx context.Context, cr client.Object, name string, labels map[string]string, t trust.Outcome, stored *corev1.ConfigMap) error {
	switch {
	case t.Bundle != nil:
		want := map[string]string{trust.BundleKey: string(t.Bundle.PEM)}
		if stored != nil && maps.Equal(stored.Data, want) && len(stored.BinaryData) == 0 && metav1.IsControlledBy(stored, cr) {
			return nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cr.GetNamespace(), Name: name}}
		if stored != nil {
			cm = stored.DeepCopy()
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		maps.Copy(cm.Labels, labels)
		cm.Labels[LabelManaged] = "true"
		cm.Data, cm.BinaryData = want, nil
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cr, b.Owner)}
		var err error
		if stored == nil {
			err = b.Client.Create(ctx, cm)
		} else {
			err = b.Client.Update(ctx, cm)
		}
		if err != nil {
			return fmt.Errorf("write CA bundle ConfigMap %s: %w", name, err)
		}
		// A changed bundle restarts the pods: an event. Its first version is
		// part of the install or upgrade that mounts it, whose event says so
		// (and TrustReady the certificates).
		if stored != nil && !maps.Equal(stored.Data, want) {
			b.Recorder.Eventf(cr, corev1.EventTypeNormal, "CABundleUpdated", "ConfigMap %s holds %d certificates merged from %s", name, t.Bundle.Certificates, strings.Join(t.Sources, ", "))
		}
		if len(t.Bundle.Warnings) > 0 {
			b.Recorder.Eventf(cr, corev1.EventTypeWarning, "CABundleWarnings", "%s", trust.Summary(t.Bundle.Warnings))
		}
	case !t.Wanted && stored != nil:
		if err := b.Client.Delete(ctx, stored, client.Preconditions{UID: &stored.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove CA bundle ConfigMap %s: %w", name, err)
		}
	}
	return nil
}

// Delete removes the bundle ConfigMap when the CR is deleted: it is not part
// of the Helm release (a garbage collector would follow its owner reference,
// but not every cluster runs one in time). Only the operator's own is
// deleted, with its UID as a precondition; a user's ConfigMap of that name
// is left alone.
func (b CABundle) Delete(ctx context.Context, cr client.Object, name string) error {
	cm, conflict, err := b.Stored(ctx, cr, name)
	if err != nil || conflict != nil || cm == nil {
		return err
	}
	return client.IgnoreNotFound(b.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}))
}
