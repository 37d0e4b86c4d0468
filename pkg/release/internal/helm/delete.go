package helm

import (
	"context"
	"fmt"
	"slices"
	"sort"

	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
)

// allowed says whether the policy lets the operator act on an object of a
// stored manifest: in the CR's namespace and of a kind the chart declares.
func allowed(o *Object, p guard.Policy) bool {
	return o.GetNamespace() == p.Namespace && slices.Contains(p.Kinds, o.Mapping.GroupVersionKind.GroupKind())
}

// deleteOwned deletes one object of a stored manifest when the policy
// allows it, the chart does not keep it and it is the operator's for this
// CR, with its UID as a precondition. left names an object that exists and
// is someone else's.
func deleteOwned(ctx context.Context, k *Kube, o *Object, p guard.Policy, own guard.Ownership) (deleted bool, left string, err error) {
	if !allowed(o, p) {
		return false, "", nil
	}
	l, conflict, err := readLive(ctx, k, o, own)
	switch {
	case err != nil:
		return false, "", err
	case l.existing == nil:
		return false, "", nil
	case conflict != nil:
		return false, o.Ref(), nil
	case keep(l.existing):
		return false, "", nil
	}
	err = k.Delete(ctx, o, l.existing.GetUID())
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone, or replaced since it was checked: not this one to delete.
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("delete %s: %w", o.Ref(), err)
	}
	return true, "", nil
}

// DeleteReleaseObjects deletes the objects of every stored revision of a
// release that are the operator's, inside the CR's namespace and not kept by
// the chart, each with its UID as a precondition. It returns how many it
// deleted and the objects it left because they are not the operator's.
func DeleteReleaseObjects(ctx context.Context, k *Kube, history []*helmrelease.Release, policy guard.Policy, own guard.Ownership) (int, []string, error) {
	done := map[string]bool{}
	deleted := 0
	var left []string
	for _, rel := range history {
		// Documents the guard refuses (outside the namespace, undeclared
		// kinds) are never acted on, not even to delete them.
		manifest, _ := guard.Filter(rel.Manifest, policy)
		objs, err := guard.Check(manifest, policy)
		if err != nil {
			return deleted, left, err
		}
		kept := map[string]bool{}
		for _, o := range objs {
			if o.Keep {
				kept[o.Kind+"/"+o.Name] = true
			}
		}
		err = eachStored(k, manifest, func(o *Object) error {
			if done[key(o)] || kept[o.Mapping.GroupVersionKind.Kind+"/"+o.GetName()] {
				return nil
			}
			done[key(o)] = true
			ok, l, err := deleteOwned(ctx, k, o, policy, own)
			switch {
			case err != nil:
				return err
			case l != "":
				left = append(left, l)
			case ok:
				deleted++
			}
			return nil
		})
		if err != nil {
			return deleted, left, fmt.Errorf("release %s revision %d: %w", rel.Name, rel.Version, err)
		}
	}
	sort.Strings(left)
	return deleted, left, nil
}
