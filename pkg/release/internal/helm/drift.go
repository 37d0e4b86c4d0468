package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/subset"
)

// RepairDrift brings the objects of a release manifest back to what the
// manifest says: missing objects are created, objects whose rendered fields
// changed are patched with the rendered fields (a JSON merge patch), and an
// object that still holds everything the manifest renders is not touched at
// all. (helm-operator-plugins' ActionInterface.Reconcile sends a patch for
// fields with a "replace" patch strategy, such as a PodDisruptionBudget's
// selector, on every call; this sends nothing when nothing drifted.)
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
func RepairDrift(cfg *action.Configuration, manifest string, policy guard.Policy, own guard.Ownership, cached func(*resource.Info) runtime.Object) ([]string, error) {
	infos, err := checkedInfos(cfg, manifest, policy)
	if err != nil {
		return nil, err
	}
	var objs []liveObject
	for _, info := range infos {
		if c := cached(info); c != nil {
			if err := (liveObject{info: info, existing: c}).owned(own); err != nil {
				return nil, err
			}
			if _, drifted, err := compare(info.Object, c); err != nil {
				return nil, err
			} else if !drifted {
				continue
			}
		}
		l, err := readOwned(info, own)
		if err != nil {
			return nil, err
		}
		objs = append(objs, l)
	}
	var repaired []string
	for _, l := range objs {
		info := l.info
		ref := info.Mapping.GroupVersionKind.Kind + "/" + info.Name
		helper := resource.NewHelper(info.Client, info.Mapping)
		if l.existing == nil {
			// The stored manifest lacks what Helm adds as it applies: its
			// release annotations and managed-by label, which mark the
			// object as this release's (without them the next reconcile
			// would see a name conflict with itself).
			if err := markHelmOwned(info.Object, own); err != nil {
				return repaired, err
			}
			if _, err := helper.Create(info.Namespace, true, info.Object); err != nil {
				return repaired, fmt.Errorf("recreate %s: %w", ref, err)
			}
			repaired = append(repaired, ref)
			continue
		}
		want, drifted, err := compare(info.Object, l.existing)
		if err != nil {
			return repaired, err
		}
		if !drifted {
			continue
		}
		if _, err := helper.Patch(info.Namespace, info.Name, types.MergePatchType, want, &metav1.PatchOptions{}); err != nil {
			return repaired, fmt.Errorf("restore %s: %w", ref, err)
		}
		repaired = append(repaired, ref)
	}
	sort.Strings(repaired)
	return repaired, nil
}

// compare says whether have lacks a field that want renders, or holds it
// with another value; want is the rendered object as JSON, the patch that
// restores it.
func compare(wantObj, haveObj runtime.Object) (want []byte, drifted bool, err error) {
	want, err = json.Marshal(wantObj)
	if err != nil {
		return nil, false, err
	}
	have, err := json.Marshal(haveObj)
	if err != nil {
		return nil, false, err
	}
	var wantDoc, haveDoc map[string]any
	if err := json.Unmarshal(want, &wantDoc); err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(have, &haveDoc); err != nil {
		return nil, false, err
	}
	// TypeMeta is not part of the comparison: typed reads may omit it.
	delete(wantDoc, "apiVersion")
	delete(wantDoc, "kind")
	return want, !subset.Of(wantDoc, haveDoc), nil
}

// markHelmOwned sets on obj what Helm sets on every object of a release,
// and the operator's label (guard.Ownership.TakeOverMarks).
func markHelmOwned(obj runtime.Object, own guard.Ownership) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	marks, releaseMarks := own.TakeOverMarks()
	m.SetLabels(merged(m.GetLabels(), marks))
	if len(releaseMarks) > 0 {
		m.SetAnnotations(merged(m.GetAnnotations(), releaseMarks))
	}
	return nil
}

// merged is dst with src's entries set (dst is allocated when nil).
func merged(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// DeleteReleaseObjects deletes the objects of every stored revision of a
// release that are the operator's, inside the CR's namespace and not kept by
// the chart, each with its UID as a precondition. It returns how many it
// deleted and the objects it left because they are not the operator's.
func DeleteReleaseObjects(cfg *action.Configuration, history []*helmrelease.Release, policy guard.Policy, own guard.Ownership) (int, []string, error) {
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
		keep := map[string]bool{}
		for _, o := range objs {
			if o.Keep {
				keep[o.Kind+"/"+o.Name] = true
			}
		}
		if len(objs) == 0 {
			continue
		}
		// One document at a time: the API of an optional kind (a ServiceMonitor,
		// a Route) may have been removed since, and with it every object of
		// that kind; that is no reason to keep the CR from being deleted.
		var infos helmkube.ResourceList
		for _, doc := range guard.Documents(manifest) {
			built, err := cfg.KubeClient.Build(bytes.NewBufferString(doc), false)
			switch {
			case meta.IsNoMatchError(err):
				continue
			case err != nil:
				return deleted, left, fmt.Errorf("read release %s revision %d: %w", rel.Name, rel.Version, err)
			}
			infos = append(infos, built...)
		}
		err = infos.Visit(func(info *resource.Info, err error) error {
			if err != nil {
				return err
			}
			kind := info.Mapping.GroupVersionKind.Kind
			key := info.Mapping.GroupVersionKind.GroupKind().String() + "/" + info.Namespace + "/" + info.Name
			if done[key] || keep[kind+"/"+info.Name] {
				return nil
			}
			done[key] = true
			ok, l, err := deleteOwned(info, policy, own)
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
			return deleted, left, err
		}
	}
	sort.Strings(left)
	return deleted, left, nil
}
