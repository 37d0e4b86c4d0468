// Package cabundle is the store of the merged CA bundles the operator writes
// for its CRs' pods, on top of pkg/trust (which decides what goes in): it
// reads the sources and the stored bundle from the API server, writes the
// bundle ConfigMap outside Helm, and deletes it with its CR. Its Cache
// remembers the operator's writes and the last merges, so that an unchanged
// bundle is read as metadata only and merged once per minute.
package cabundle

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// Store is the I/O of a CR's merged CA bundle, a ConfigMap the operator
// writes itself (outside Helm) for the pods to mount: the kinds decide what
// goes in (trust.Resolve), this reads the sources and writes the result.
type Store struct {
	// Client writes the ConfigMap; Reader reads ConfigMaps from the API
	// server (they are never cached).
	Client   client.Client
	Reader   client.Reader
	Recorder record.EventRecorder
	// Owner is the CR's kind.
	Owner schema.GroupVersionKind
	// Cache remembers the operator's writes, so that an unchanged bundle
	// is read as metadata only, and the last merges; nil reads every bundle
	// whole and merges every time.
	Cache *Cache
	// Metadata is the cache of ConfigMap metadata (nil: none): a bundle the
	// operator has not written and Open Data Hub's bundle are not read from
	// the API server when it holds no such ConfigMap (KnownAbsent).
	Metadata client.Reader
	// ManagedLabel ("true") marks the bundle ConfigMaps as the operator's.
	ManagedLabel string
}

// Stored is the operator's bundle ConfigMap as it is now: its metadata and
// the content hash of its data.
type Stored struct {
	metav1.ObjectMeta
	// Hash is trust.ContentHash of its data and binary data.
	Hash string
}

// Cache is what the store remembers across reconciles; one per operator.
//
// Its writes are, for each bundle ConfigMap, the resourceVersion and content
// hash of the operator's last write of it. A bundle of the public roots is
// over 170 KiB, and every reconcile of its CR looks at it: when its
// resourceVersion is still the one written, the data is what was written,
// and its metadata is all that is read. Any other write (a user's edit)
// changes the resourceVersion, and the bundle is read whole and compared
// again. Its merges are the last merges of sources (trust.MergeCache). A new
// process starts empty.
type Cache struct {
	writes sync.Map
	merges trust.MergeCache
}

type writtenBundle struct{ resourceVersion, hash string }

// has says whether the operator wrote the bundle of key (and did not
// delete it since).
func (w *Cache) has(key client.ObjectKey) bool {
	if w == nil {
		return false
	}
	_, ok := w.writes.Load(key)
	return ok
}

func (w *Cache) lookup(key client.ObjectKey, resourceVersion string) (string, bool) {
	if w == nil {
		return "", false
	}
	v, ok := w.writes.Load(key)
	if !ok || v.(writtenBundle).resourceVersion != resourceVersion {
		return "", false
	}
	return v.(writtenBundle).hash, true
}

func (w *Cache) record(key client.ObjectKey, resourceVersion, hash string) {
	if w != nil {
		w.writes.Store(key, writtenBundle{resourceVersion: resourceVersion, hash: hash})
	}
}

func (w *Cache) forget(key client.ObjectKey) {
	if w != nil {
		w.writes.Delete(key)
	}
}

func (b Store) ownership(cr client.Object) guard.Ownership {
	return guard.Ownership{Label: b.ManagedLabel, Owner: b.Owner.GroupKind(), Namespace: cr.GetNamespace(), Name: cr.GetName(), UID: cr.GetUID()}
}

// Stored reads the bundle ConfigMap of the name: the operator's (nil when
// absent), or conflict when a ConfigMap of that name is someone else's,
// which is neither mounted, nor overwritten, nor deleted. It reads the
// metadata, and the data only when the operator did not write this version.
func (b Store) Stored(ctx context.Context, cr client.Object, name string) (stored *Stored, conflict, err error) {
	key := client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}
	ref := "ConfigMap " + key.Namespace + "/" + key.Name
	// read reads obj and checks that it is the operator's: found is false
	// when it does not exist or is someone else's (conflict).
	read := func(obj client.Object) (found bool, conflict, err error) {
		err = b.Reader.Get(ctx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil, nil
		case err != nil:
			return false, nil, fmt.Errorf("read CA bundle ConfigMap %s: %w", name, err)
		}
		own := b.ownership(cr)
		// The upstream operator's bundle of the same name for this very CR
		// (its controller reference is the CR, by UID) is taken over: the
		// next write makes it the operator's (issue 46).
		if conflict := own.Check(ref, obj.GetLabels(), obj.GetAnnotations(), obj.GetOwnerReferences()); conflict != nil && !own.TakesOver(obj.GetOwnerReferences()) {
			return false, conflict, nil
		}
		return true, nil, nil
	}
	if !b.Cache.has(key) && KnownAbsent(ctx, b.Metadata, key) {
		return nil, nil, nil
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if found, conflict, err := read(meta); !found {
		return nil, conflict, err
	}
	if hash, ok := b.Cache.lookup(key, meta.ResourceVersion); ok {
		return &Stored{ObjectMeta: meta.ObjectMeta, Hash: hash}, nil, nil
	}
	cm := &corev1.ConfigMap{}
	if found, conflict, err := read(cm); !found {
		return nil, conflict, err
	}
	return &Stored{ObjectMeta: cm.ObjectMeta, Hash: trust.ContentHash(cm.Data, cm.BinaryData)}, nil, nil
}

// Resolve merges the CA sources of the request, reading them from the API server.
func (b Store) Resolve(ctx context.Context, req trust.Request) (trust.Outcome, error) {
	// Open Data Hub's bundle is optional; a missing source the CR names is
	// an error, which the API server confirms.
	named := req.Explicit != nil && req.Explicit.Name == trust.ODHBundle
	for _, ref := range req.AlsoExplicit {
		named = named || ref.Name == trust.ODHBundle
	}
	if req.Merges == nil {
		req.Merges = b.Cache.mergeCache()
	}
	return trust.Resolve(req, func(ns, name string) (*trust.ConfigMap, error) {
		if name == trust.ODHBundle && ns == req.Namespace && !named && KnownAbsent(ctx, b.Metadata, client.ObjectKey{Namespace: ns, Name: name}) {
			return nil, nil
		}
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

// Gathered is a CR's trust as one reconcile gathers it.
type Gathered struct {
	// Outcome is the merge: the bundle, or why there is none.
	Outcome trust.Outcome
	// Stored is the operator's bundle ConfigMap as it was; nil when absent.
	Stored *Stored
	// Conflict is set when the bundle's name is taken by a ConfigMap the
	// operator did not write: nothing may be applied (the pods would start
	// without the CAs they need), and the CR says so.
	Conflict *status.Failure
	// MountHash is the content hash of the bundle the pods mount ("" when
	// none is mounted): the chart mounts it by name and annotates the pods
	// with it, so that they restart exactly when it changes.
	MountHash string
}

// Gather is the sequence every kind runs for its CR's bundle ConfigMap of
// the name: read what is stored, merge the sources of the kind's own trust
// request (built from what is stored and whether the name is taken), and
// refuse a name conflict. The error is the API server's; what the user
// fixes is in the outcome, or the Conflict.
func (b Store) Gather(ctx context.Context, cr client.Object, name string, request func(stored *Stored, conflict error) trust.Request) (Gathered, error) {
	stored, conflict, err := b.Stored(ctx, cr, name)
	if err != nil {
		return Gathered{}, err
	}
	g := Gathered{Stored: stored}
	if g.Outcome, err = b.Resolve(ctx, request(stored, conflict)); err != nil {
		return Gathered{}, err
	}
	if g.Outcome.Reason == trust.ReasonNameConflict {
		g.Conflict = &status.Failure{Reason: status.ReasonNameConflict, Message: g.Outcome.Message}
		return g, nil
	}
	g.MountHash = g.Outcome.MountHash()
	return g, nil
}

// Write makes the bundle ConfigMap (stored is its current state, nil when
// absent) hold the outcome's bundle, or removes it when no CA source applies
// any more. On a failed merge it leaves the last good bundle alone. labels
// are the ConfigMap's labels besides the managed label.
func (b Store) Write(ctx context.Context, cr client.Object, name string, labels map[string]string, t trust.Outcome, stored *Stored) error {
	key := client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}
	switch {
	case t.Bundle != nil:
		hash := t.MountHash()
		if stored != nil && stored.Hash == hash && metav1.IsControlledBy(stored, cr) {
			return nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		if stored != nil {
			cm.ObjectMeta = *stored.ObjectMeta.DeepCopy()
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		maps.Copy(cm.Labels, labels)
		cm.Labels[b.ManagedLabel] = "true"
		cm.Data = map[string]string{trust.BundleKey: string(t.Bundle.PEM)}
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cr, b.Owner)}
		var err error
		if stored == nil {
			err = b.Client.Create(ctx, cm)
		} else {
			err = b.Client.Update(ctx, cm)
		}
		if err != nil {
			b.Cache.forget(key)
			return fmt.Errorf("write CA bundle ConfigMap %s: %w", name, err)
		}
		b.Cache.record(key, cm.ResourceVersion, hash)
		// A changed bundle restarts the pods: an event. Its first version is
		// part of the install or upgrade that mounts it, whose event says so
		// (and TrustReady the certificates).
		if stored != nil && stored.Hash != hash {
			b.Recorder.Eventf(cr, corev1.EventTypeNormal, "CABundleUpdated", "ConfigMap %s holds %d certificates merged from %s", name, t.Bundle.Certificates, strings.Join(t.Sources, ", "))
		}
		if len(t.Bundle.Warnings) > 0 {
			b.Recorder.Eventf(cr, corev1.EventTypeWarning, "CABundleWarnings", "%s", trust.Summary(t.Bundle.Warnings))
		}
	case !t.Wanted && stored != nil:
		b.Cache.forget(key)
		if err := b.Client.Delete(ctx, stored.object(), client.Preconditions{UID: &stored.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove CA bundle ConfigMap %s: %w", name, err)
		}
	}
	return nil
}

// object is the ConfigMap, for a delete.
func (s *Stored) object() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, UID: s.UID}}
}

// Delete removes the bundle ConfigMap when the CR is deleted: it is not part
// of the Helm release (a garbage collector would follow its owner reference,
// but not every cluster runs one in time). Only the operator's own is
// deleted, with its UID as a precondition; a user's ConfigMap of that name
// is left alone.
func (b Store) Delete(ctx context.Context, cr client.Object, name string) error {
	stored, conflict, err := b.Stored(ctx, cr, name)
	if err != nil || conflict != nil || stored == nil {
		return err
	}
	b.Cache.forget(client.ObjectKeyFromObject(stored.object()))
	return client.IgnoreNotFound(b.Client.Delete(ctx, stored.object(), client.Preconditions{UID: &stored.UID}))
}

// mergeCache is the cache's merges (nil without a cache: merge every time).
func (w *Cache) mergeCache() *trust.MergeCache {
	if w == nil {
		return nil
	}
	return &w.merges
}

// KnownAbsent says whether the cache of ConfigMap metadata (nil: none)
// knows that a ConfigMap does not exist. Optional ConfigMaps (the operator's
// settings, Open Data Hub's bundle, the operator's own CA bundle) are read on
// every reconcile and are mostly absent; the cache answers that without a
// request. Should one appear, its event reconciles the CRs that read it (the
// watch that fills the cache). A cache that cannot tell (a namespace it does
// not cover) says false, and the API server is asked.
func KnownAbsent(ctx context.Context, metadata client.Reader, key client.ObjectKey) bool {
	if metadata == nil {
		return false
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return apierrors.IsNotFound(metadata.Get(ctx, key, m))
}
