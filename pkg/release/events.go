package release

import (
	"slices"
	"sort"
	"strings"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// recordTransitions emits one event per condition whose status changed.
func (r *Reconciler) recordTransitions(obj client.Object, before, after []metav1.Condition) {
	for _, t := range status.Transitions(before, after) {
		c := t.Condition
		prev := meta.FindStatusCondition(before, c.Type)
		failure := c.Type == status.TypeReconciled || slices.Contains(r.meta.WarningConditions, c.Type)
		eventType := ""
		switch {
		case failure && c.Status == metav1.ConditionFalse:
			// Something the user or the administrator must fix, from the start too.
			eventType = corev1.EventTypeWarning
		case failure && prev != nil:
			// Its recovery.
			eventType = corev1.EventTypeNormal
		case c.Type == status.TypeReady && prev != nil:
			// Ready changed: the server serves, or stopped serving, the spec.
			eventType = corev1.EventTypeNormal
		}
		// A condition that starts out as expected, and the changes Ready's
		// message already reports (DeploymentReady, ServiceReady, ...), are in
		// the status only: an event is a write, and nobody acts on those.
		if eventType != "" {
			r.recorder.Eventf(obj, eventType, c.Reason, "%s is %s: %s", c.Type, c.Status, c.Message)
		}
	}
}

// renderedRefs are a refused manifest's objects ("Kind/name"), sorted as a
// release's are.
func renderedRefs(rendered []string) []ObjectRef {
	var out []ObjectRef
	for _, s := range rendered {
		if kind, name, ok := strings.Cut(s, "/"); ok {
			out = append(out, ObjectRef{Kind: kind, Name: name})
		}
	}
	sortRefs(out)
	return out
}

func parseManifestObjects(manifest string) []ObjectRef {
	var out []ObjectRef
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil || head.Kind == "" {
			continue
		}
		out = append(out, ObjectRef{Kind: head.Kind, Name: head.Metadata.Name})
	}
	sortRefs(out)
	return out
}

func sortRefs(out []ObjectRef) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
}

// recheckSoon are the failures that a change no watch of the operator sees
// resolves: they are reconciled again after conflictRecheck.
var recheckSoon = map[string]bool{status.ReasonNameConflict: true, status.ReasonReleaseBusy: true, status.ReasonOperatorForbidden: true}
