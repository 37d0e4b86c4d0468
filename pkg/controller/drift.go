package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/subset"
)

// repairDrift brings the objects of a release manifest back to what the
// manifest says: missing objects are created, objects whose rendered fields
// changed are patched with the rendered fields (a JSON merge patch), and an
// object that still holds everything the manifest renders is not touched at
// all. (helm-operator-plugins' ActionInterface.Reconcile sends a patch for
// fields with a "replace" patch strategy, such as a PodDisruptionBudget's
// selector, on every call; this sends nothing when nothing drifted.)
// It returns the objects it repaired, as "Kind/name".
func repairDrift(cfg *action.Configuration, manifest string) ([]string, error) {
	infos, err := cfg.KubeClient.Build(bytes.NewBufferString(manifest), false)
	if err != nil {
		return nil, fmt.Errorf("read release manifest: %w", err)
	}
	var repaired []string
	err = infos.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		ref := info.Mapping.GroupVersionKind.Kind + "/" + info.Name
		helper := resource.NewHelper(info.Client, info.Mapping)
		existing, err := helper.Get(info.Namespace, info.Name)
		if apierrors.IsNotFound(err) {
			if _, err := helper.Create(info.Namespace, true, info.Object); err != nil {
				return fmt.Errorf("recreate %s: %w", ref, err)
			}
			repaired = append(repaired, ref)
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", ref, err)
		}
		want, err := json.Marshal(info.Object)
		if err != nil {
			return err
		}
		have, err := json.Marshal(existing)
		if err != nil {
			return err
		}
		var wantDoc, haveDoc map[string]any
		if err := json.Unmarshal(want, &wantDoc); err != nil {
			return err
		}
		if err := json.Unmarshal(have, &haveDoc); err != nil {
			return err
		}
		// TypeMeta is not part of the comparison: typed reads may omit it.
		delete(wantDoc, "apiVersion")
		delete(wantDoc, "kind")
		if subset.Of(wantDoc, haveDoc) {
			return nil
		}
		if _, err := helper.Patch(info.Namespace, info.Name, types.MergePatchType, want, &metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("restore %s: %w", ref, err)
		}
		repaired = append(repaired, ref)
		return nil
	})
	sort.Strings(repaired)
	return repaired, err
}
