package trustyai

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
)

// ModelMesh: the Deployments of ModelMesh Serving (label
// modelmesh-service=modelmesh-serving) send their payloads to the service
// when its consumer endpoint is in MM_PAYLOAD_PROCESSORS of their mm
// container, exactly once; with TLS, that container mounts the service's
// internal certificate (<name>-internal) read-only at /etc/trustyai/tls and
// MM_TLS_KEY_CERT_PATH names /etc/trustyai/tls/tls.crt, as upstream sets them
// (upstream's controllers/tas/certificates.go): a Deployment upstream wired
// is already as wanted. Each write is an event of upstream's reason,
// InferenceServiceConfigured.

// ModelMeshLabels select ModelMesh Serving's Deployments.
var ModelMeshLabels = map[string]string{"modelmesh-service": "modelmesh-serving"}

const (
	modelMeshContainer   = "mm"
	envPayloadProcessors = "MM_PAYLOAD_PROCESSORS"
	envTLSKeyCertPath    = "MM_TLS_KEY_CERT_PATH"
	// modelMeshCertPath is where the mm container mounts <name>-internal:
	// upstream's tlsMountPath.
	modelMeshCertPath = "/etc/trustyai/tls"
)

// modelMeshWant is what the wiring wants in a ModelMesh Deployment.
type modelMeshWant struct {
	// URL is the service's consumer endpoint.
	URL string
	// Secret is the service's internal certificate; "" without TLS.
	Secret string
	// Volume mounts Secret in the mm container: a DNS label for every CR
	// name (modelMeshVolumeName).
	Volume string
}

// modelMeshWantOf is the CR's payload processor: the service's TLS endpoint
// where it has a certificate, plain http where it has none.
func modelMeshWantOf(cr *trustyv1.TrustyAIService, tlsMode string) modelMeshWant {
	if tlsMode == platform.TLSNone {
		return modelMeshWant{URL: fmt.Sprintf("http://%s.%s.svc/consumer/kserve/v2", serviceName(cr.Name), cr.Namespace)}
	}
	return modelMeshWant{URL: fmt.Sprintf("https://%s.%s.svc/consumer/kserve/v2", serviceName(cr.Name), cr.Namespace), Secret: internalSecretName(cr.Name), Volume: modelMeshVolumeName(cr.Name)}
}

// The field paths (structured-merge-diff's notation) of what the wiring sets.
const (
	pathMM          = `.spec.template.spec.containers[name="mm"]`
	pathProcessors  = pathMM + `.env[name="MM_PAYLOAD_PROCESSORS"]`
	pathCertEnv     = pathMM + `.env[name="MM_TLS_KEY_CERT_PATH"]`
	pathCertMount   = pathMM + `.volumeMounts[mountPath="` + modelMeshCertPath + `"]`
	pathVolumesList = `.spec.template.spec.volumes`
)

// ownedPaths are the field paths the managers own (the wiring's own entries
// when mine, everyone else's otherwise), in structured-merge-diff's notation.
func ownedPaths(fields []metav1.ManagedFieldsEntry, mine bool) map[string]bool {
	paths := map[string]bool{}
	for _, m := range fields {
		if (m.Manager == FieldManager) != mine || m.FieldsV1 == nil || m.Subresource != "" {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(m.FieldsV1.GetRawBytes())); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) { paths[p.String()] = true })
	}
	return paths
}

// managerPaths are the field paths one manager owns, whatever the operation.
func managerPaths(fields []metav1.ManagedFieldsEntry, manager string) map[string]bool {
	var own []metav1.ManagedFieldsEntry
	for _, m := range fields {
		if m.Manager == manager {
			own = append(own, m)
		}
	}
	// Entries of another manager's name, read as "everyone else's".
	return ownedPaths(own, manager == FieldManager)
}

// modelMeshPlan is what the wiring does to one ModelMesh Deployment.
type modelMeshPlan struct {
	// cfg is the server-side apply configuration of the wiring's own fields;
	// applied unless applyDone.
	cfg       *unstructured.Unstructured
	applyDone bool
	// edit appends the URL to a MM_PAYLOAD_PROCESSORS another manager set;
	// nil when there is nothing to append.
	edit *valueEdit
	// shared: another manager set the variable, and the URL is (or is to be)
	// appended to its list rather than applied.
	shared bool
	// ownedBy are the other managers of a certificate field the wiring
	// would change.
	ownedBy []string
	// problem says why the Deployment cannot be wired.
	problem string
}

// done says whether the Deployment is already as wanted.
func (p modelMeshPlan) done() bool { return p.applyDone && p.edit == nil }

// planModelMesh plans the wiring of a ModelMesh Deployment.
//
// MM_PAYLOAD_PROCESSORS: where nobody else set it (absent, empty, or the
// wiring's own apply alone owns its value), the wiring applies its URL as the
// value. Where another manager set a value (or one nobody owns, from before
// managed fields), the URL is appended to that list by a JSON patch
// (valueEdit), once, and the variable is left out of the apply: an apply of
// it would conflict, or, forced, take it over.
func planModelMesh(d *appsv1.Deployment, want modelMeshWant) modelMeshPlan {
	ci, ei := -1, -1
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == modelMeshContainer {
			ci = i
		}
	}
	if ci < 0 {
		return modelMeshPlan{problem: fmt.Sprintf("ModelMesh Deployment %s has no container %s to send payloads from", d.Name, modelMeshContainer)}
	}
	mm := &d.Spec.Template.Spec.Containers[ci]
	for i := range mm.Env {
		if mm.Env[i].Name == envPayloadProcessors {
			ei = i
		}
	}
	current := envValue(mm, envPayloadProcessors)
	mine, others := ownedPaths(d.ManagedFields, true), ownedPaths(d.ManagedFields, false)
	valuePath := pathProcessors + ".value"

	var p modelMeshPlan
	p.shared = ei >= 0 && current != "" && (others[valuePath] || !mine[valuePath])
	container := map[string]any{"name": modelMeshContainer}
	podSpec := map[string]any{"containers": []any{container}}
	var env []any
	done := true
	switch {
	case !p.shared:
		env = append(env, map[string]any{"name": envPayloadProcessors, "value": want.URL})
		done = current == want.URL
	default:
		if ownsItem(mine, pathProcessors) {
			// The wiring applied the variable before another manager set its
			// value: keep the entry (name alone) in the apply, since leaving
			// it out would remove the entry, the other's value with it.
			env = append(env, map[string]any{"name": envPayloadProcessors})
		}
		next := current
		if managerPaths(d.ManagedFields, AppendManager)[valuePath] {
			// The value is as the wiring's last edit left it: an earlier URL
			// of the same service (http before its certificate) is the
			// wiring's to take out.
			next = withoutTokens(next, otherSchemeURL(want.URL))
		}
		if next = appendToken(next, want.URL); next != current {
			p.edit = &valueEdit{Container: ci, Env: ei, Old: current, New: next}
		}
	}
	allowed := []string{pathProcessors}
	if want.Secret != "" {
		certFile := modelMeshCertPath + "/tls.crt"
		env = append(env, map[string]any{"name": envTLSKeyCertPath, "value": certFile})
		container["volumeMounts"] = []any{map[string]any{"name": want.Volume, "mountPath": modelMeshCertPath, "readOnly": true}}
		podSpec["volumes"] = []any{map[string]any{"name": want.Volume, "secret": map[string]any{"secretName": want.Secret}}}
		pathVolume := pathVolumesList + `[name="` + want.Volume + `"]`
		allowed = append(allowed, pathCertEnv, pathCertMount, pathVolume)
		done = done && envValue(mm, envTLSKeyCertPath) == certFile && mounted(mm, want.Volume) && hasSecretVolume(d, want.Volume, want.Secret)
		if envValue(mm, envTLSKeyCertPath) != certFile {
			// Changing a value another manager owns would conflict: say so
			// without writing.
			p.ownedBy = otherOwners(d.ManagedFields, pathCertEnv+".value")
		}
	}
	if len(env) > 0 {
		container["env"] = env
	}
	p.cfg = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": d.Name, "namespace": d.Namespace, "uid": string(d.UID)},
		"spec":     map[string]any{"template": map[string]any{"spec": podSpec}},
	}}
	p.applyDone = done && !stale(mine, allowed)
	return p
}

// ownsItem says whether the paths hold the list item or a field of it.
func ownsItem(paths map[string]bool, item string) bool {
	for p := range paths {
		if p == item || strings.HasPrefix(p, item+".") {
			return true
		}
	}
	return false
}

// otherSchemeURL is the URL with the other of http and https.
func otherSchemeURL(url string) string {
	if rest, ok := strings.CutPrefix(url, "https://"); ok {
		return "http://" + rest
	}
	if rest, ok := strings.CutPrefix(url, "http://"); ok {
		return "https://" + rest
	}
	return ""
}

// stale says whether the wiring owns a field it no longer wants (the
// certificate after a switch to no TLS, another service's volume).
func stale(mine map[string]bool, allowed []string) bool {
	for p := range mine {
		if p == pathMM || p == pathMM+".name" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || p == a || strings.HasPrefix(p, a+".")
		}
		if !ok {
			return true
		}
	}
	return false
}

func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func mounted(c *corev1.Container, volume string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == volume && m.MountPath == modelMeshCertPath {
			return true
		}
	}
	return false
}

func hasSecretVolume(d *appsv1.Deployment, volume, secret string) bool {
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == volume && v.Secret != nil && v.Secret.SecretName == secret {
			return true
		}
	}
	return false
}

// modelMeshDeployments lists the namespace's ModelMesh Deployments, live
// (the cache holds only the operator's own Deployments), sorted by name.
func (k *Kind) modelMeshDeployments(ctx context.Context, ns string) ([]appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := k.APIReader.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(ModelMeshLabels)); err != nil {
		return nil, fmt.Errorf("list ModelMesh Deployments: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// wireModelMesh points the namespace's ModelMesh Deployments at the service.
func (k *Kind) wireModelMesh(ctx context.Context, cr *trustyv1.TrustyAIService, tlsMode string) ([]outcome, error) {
	ds, err := k.modelMeshDeployments(ctx, cr.Namespace)
	if err != nil {
		return nil, err
	}
	want := modelMeshWantOf(cr, tlsMode)
	const kind = "ModelMesh Deployment"
	var outs []outcome
	for i := range ds {
		d := &ds[i]
		p := planModelMesh(d, want)
		fix := fmt.Sprintf("add %s to ModelMesh's payloadProcessors (ConfigMap model-serving-config), which sets the variable, and the operator finds it there", want.URL)
		var detail string
		if p.shared {
			detail = fmt.Sprintf("%s %s: the service's URL is appended to the %s that another manager set, whose entries stay as they are", kind, d.Name, envPayloadProcessors)
		}
		switch {
		case p.problem != "":
			outs = append(outs, outcome{kind: kind, name: d.Name, state: unfit, detail: p.problem})
			continue
		case p.done():
			outs = append(outs, outcome{kind: kind, name: d.Name, detail: detail})
			continue
		case len(p.ownedBy) > 0:
			outs = append(outs, outcome{kind: kind, name: d.Name, state: ownedElsewhere, detail: fmt.Sprintf("%s %s: container mm's %s is set by %s; the operator does not force it", kind, d.Name, envTLSKeyCertPath, quoted(p.ownedBy))})
			continue
		case !k.budget.allows(budgetKey(cr, d.UID), time.Now()):
			outs = append(outs, outcome{kind: kind, name: d.Name, state: reverted, detail: revertedDetail(kind, d.Name, d.ManagedFields) + "; for ModelMesh's own controller: " + fix})
			continue
		}
		o := outcome{kind: kind, name: d.Name, detail: detail}
		if p.edit != nil {
			by := otherOwners(d.ManagedFields, pathProcessors+".value")
			ok, err := k.editProcessors(ctx, d, *p.edit)
			if err != nil {
				return nil, err
			}
			if !ok {
				outs = append(outs, outcome{kind: kind, name: d.Name, state: unfit, detail: fmt.Sprintf("%s %s changed while it was configured; looking again", kind, d.Name)})
				continue
			}
			k.budget.record(budgetKey(cr, d.UID), time.Now())
			setBy := "another manager"
			if by = slices.DeleteFunc(by, func(m string) bool { return m == AppendManager }); len(by) > 0 {
				setBy = quoted(by)
			}
			k.Recorder.Event(cr, corev1.EventTypeNormal, eventInferenceServiceConfigured, fmt.Sprintf("ModelMesh Deployment %s sends its payloads to %s: appended to the %s that %s set, which keeps its entries", d.Name, want.URL, envPayloadProcessors, setBy))
		}
		if !p.applyDone {
			event := fmt.Sprintf("ModelMesh Deployment %s sends its payloads to %s", d.Name, want.URL)
			if p.edit != nil {
				event = ""
			}
			applied, err := k.applyWired(ctx, cr, p.cfg, kind, fix, eventInferenceServiceConfigured, event)
			if err != nil {
				return nil, err
			}
			if applied.state == configured && p.edit == nil {
				// One write of the wiring per Deployment and reconcile.
				k.budget.record(budgetKey(cr, d.UID), time.Now())
			}
			if applied.state != configured {
				o = applied
			}
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// editProcessors patches the value of MM_PAYLOAD_PROCESSORS, as the edit
// says, only where it is still as it was read; ok is false (and nothing
// changed) when it is not, or the Deployment is gone.
func (k *Kind) editProcessors(ctx context.Context, d *appsv1.Deployment, e valueEdit) (ok bool, err error) {
	patch, err := e.jsonPatch(string(d.UID))
	if err != nil {
		return false, err
	}
	err = k.Client.Patch(ctx, d, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(AppendManager))
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err), apierrors.IsInvalid(err), apierrors.IsConflict(err):
		// A failed test (422), or gone: the change that made it so is a
		// change of the Deployment's spec, whose event reconciles again.
		return false, nil
	}
	return false, fmt.Errorf("edit %s of ModelMesh Deployment %s: %w", envPayloadProcessors, d.Name, err)
}

// unwireModelMesh gives back what the wiring applied to the namespace's
// ModelMesh Deployments, and takes its URLs out of every
// MM_PAYLOAD_PROCESSORS it appended them to, leaving the rest of that list as
// it is. With a handover (another TrustyAIService of the namespace takes
// over, by the same field manager), the applied fields stay for it.
func (k *Kind) unwireModelMesh(ctx context.Context, cr *trustyv1.TrustyAIService, handover bool) error {
	ds, err := k.modelMeshDeployments(ctx, cr.Namespace)
	if err != nil {
		return err
	}
	ours := []string{modelMeshWantOf(cr, platform.TLSNone).URL, modelMeshWantOf(cr, platform.TLSCertManager).URL}
	for i := range ds {
		d := &ds[i]
		if e := appendedEdit(d, ours); e != nil {
			ok, err := k.editProcessors(ctx, d, *e)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("ModelMesh Deployment %s changed while the service's URL was taken out of %s; trying again", d.Name, envPayloadProcessors)
			}
		}
		if handover || !ownsFields(d) {
			continue
		}
		if err := k.release(ctx, releaseConfig(d)); err != nil {
			return err
		}
	}
	return nil
}

// appendedEdit takes the URLs out of the MM_PAYLOAD_PROCESSORS that the
// wiring appended them to (the append manager owns the value: the wiring's
// edit was its last change); nil when there is nothing to take out.
func appendedEdit(d *appsv1.Deployment, urls []string) *valueEdit {
	for ci := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[ci]
		if c.Name != modelMeshContainer {
			continue
		}
		for ei, e := range c.Env {
			if e.Name != envPayloadProcessors || !managerPaths(d.ManagedFields, AppendManager)[pathProcessors+".value"] {
				continue
			}
			if next := withoutTokens(e.Value, urls...); next != e.Value {
				return &valueEdit{Container: ci, Env: ei, Old: e.Value, New: next}
			}
		}
	}
	return nil
}

// releaseConfig is the apply that gives back the wiring's fields of a
// ModelMesh Deployment: nothing, except the MM_PAYLOAD_PROCESSORS entry
// (its name alone) where the wiring applied it before another manager set
// its value. Left out, the entry would go, and that manager's value with it.
func releaseConfig(d *appsv1.Deployment) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(d.Namespace)
	u.SetName(d.Name)
	u.SetUID(d.UID)
	if ownsItem(ownedPaths(d.ManagedFields, true), pathProcessors) && ownedPaths(d.ManagedFields, false)[pathProcessors+".value"] {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"name": modelMeshContainer,
			"env":  []any{map[string]any{"name": envPayloadProcessors}},
		}}, "spec", "template", "spec", "containers")
	}
	return u
}

// quoted lists manager names as the API server's conflicts do.
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
