package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/subset"
)

// RepairDrift brings the objects of a release manifest back to what the
// manifest says: an object that is missing, or lacks a field the manifest
// renders, or holds it with another value, is applied again (server-side
// apply, one request); an object that still holds everything the manifest
// renders is not touched at all.
//
// cached gives an object's copy in the operator's cache (nil when it has no
// full one): a copy that is the operator's and holds everything rendered is
// taken as it is, and only the others are read from the API server. A copy
// that lags an edit is no loss: the edit's event reconciles again. A name
// the cache lacks is always read, since the cache holds only objects with
// the operator's label and someone else's object may be there.
//
// The stored manifest is checked like a fresh render first (a release
// stored by an older operator may hold objects the guard refuses), and every
// object is checked for ownership before anything is written: nothing is
// repaired when one name is taken by an object the operator did not create.
// It returns the objects it repaired, as "Kind/name".
func RepairDrift(ctx context.Context, k *Kube, manifest string, policy guard.Policy, own guard.Ownership, cached func(*Object) runtime.Object) ([]string, error) {
	objs, err := checkedObjects(k, manifest, policy)
	if err != nil {
		return nil, err
	}
	var lives []liveObject
	for _, o := range objs {
		// The stored manifest lacks what is set as it is applied: the
		// release marks and the operator's label, which mark the object as
		// this release's.
		markHelmOwned(o.Unstructured, own)
		if c := cached(o); c != nil {
			if err := owned(o, c, own); err != nil {
				return nil, err
			}
			if drifted, err := compare(o.Unstructured, c); err != nil {
				return nil, err
			} else if !drifted {
				continue
			}
		}
		l, err := readOwned(ctx, k, o, own)
		if err != nil {
			return nil, err
		}
		lives = append(lives, l)
	}
	var repaired []string
	for _, l := range lives {
		ref := l.obj.Mapping.GroupVersionKind.Kind + "/" + l.obj.GetName()
		if l.existing != nil {
			if drifted, err := compare(l.obj.Unstructured, l.existing); err != nil {
				return repaired, err
			} else if !drifted {
				continue
			}
		}
		if err := k.Apply(ctx, l.obj, l.existing); err != nil {
			return repaired, fmt.Errorf("restore %s: %w", ref, err)
		}
		repaired = append(repaired, ref)
	}
	sort.Strings(repaired)
	return repaired, nil
}

// owned is nil when have, a copy of o's live object, is the operator's for
// this release and CR, and a *guard.Conflict when it is not.
func owned(o *Object, have runtime.Object, own guard.Ownership) error {
	m, err := meta.Accessor(have)
	if err != nil {
		return own.Check(o.Ref(), nil, nil, nil) // without metadata it is not the operator's
	}
	return own.Check(o.Ref(), m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences())
}

// compare says whether have lacks a field that want renders, or holds it
// with another value.
func compare(want *unstructured.Unstructured, haveObj runtime.Object) (drifted bool, err error) {
	// Both as encoding/json decodes them (numbers as float64).
	have, err := json.Marshal(haveObj)
	if err != nil {
		return false, err
	}
	var haveDoc map[string]any
	if err := json.Unmarshal(have, &haveDoc); err != nil {
		return false, err
	}
	b, err := json.Marshal(want.Object)
	if err != nil {
		return false, err
	}
	var wantDoc map[string]any
	if err := json.Unmarshal(b, &wantDoc); err != nil {
		return false, err
	}
	// TypeMeta is not part of the comparison: typed reads may omit it.
	delete(wantDoc, "apiVersion")
	delete(wantDoc, "kind")
	return !subset.Of(wantDoc, haveDoc), nil
}

// markHelmOwned sets on u what Helm sets on every object of a release,
// and the operator's label (guard.Ownership.TakeOverMarks).
func markHelmOwned(u *unstructured.Unstructured, own guard.Ownership) {
	marks, releaseMarks := own.TakeOverMarks()
	u.SetLabels(merged(u.GetLabels(), marks))
	if len(releaseMarks) > 0 {
		u.SetAnnotations(merged(u.GetAnnotations(), releaseMarks))
	}
}

// merged is dst with src's entries set (a copy; allocated when nil).
func merged(dst, src map[string]string) map[string]string {
	out := maps.Clone(dst)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, src)
	return out
}
