package trustyai

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
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
	if tlsMode == tlsNone {
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
		if err := set.FromJSON(bytes.NewReader(m.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) { paths[p.String()] = true })
	}
	return paths
}

// processors is the MM_PAYLOAD_PROCESSORS the wiring wants: its URL alone
// when the wiring alone owns the variable (whatever else it holds is an
// earlier URL of the wiring's), and otherwise the existing list with the URL
// appended unless it is in it already.
func processors(existing, url string, solelyMine bool) string {
	if solelyMine {
		return url
	}
	tokens := strings.Fields(existing)
	for _, t := range tokens {
		if t == url {
			return existing
		}
	}
	return strings.Join(append(tokens, url), " ")
}

// planModelMesh is the apply configuration of a ModelMesh Deployment and
// whether the Deployment is already as wanted (then nothing is written);
// problem says why it cannot be wired.
func planModelMesh(d *appsv1.Deployment, want modelMeshWant) (cfg *unstructured.Unstructured, done bool, problem string, ownedBy []string) {
	var mm *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == modelMeshContainer {
			mm = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if mm == nil {
		return nil, false, fmt.Sprintf("ModelMesh Deployment %s has no container %s to send payloads from", d.Name, modelMeshContainer), nil
	}
	mine, others := ownedPaths(d.ManagedFields, true), ownedPaths(d.ManagedFields, false)
	value := processors(envValue(mm, envPayloadProcessors), want.URL, mine[pathProcessors+".value"] && !others[pathProcessors+".value"])

	if envValue(mm, envPayloadProcessors) != value {
		// Changing a value another manager owns would conflict: say so
		// without writing.
		ownedBy = otherOwners(d.ManagedFields, pathProcessors+".value")
	}
	env := []any{map[string]any{"name": envPayloadProcessors, "value": value}}
	container := map[string]any{"name": modelMeshContainer}
	podSpec := map[string]any{"containers": []any{container}}
	allowed := []string{pathProcessors}
	done = envValue(mm, envPayloadProcessors) == value
	if want.Secret != "" {
		certFile := modelMeshCertPath + "/tls.crt"
		env = append(env, map[string]any{"name": envTLSKeyCertPath, "value": certFile})
		container["volumeMounts"] = []any{map[string]any{"name": want.Volume, "mountPath": modelMeshCertPath, "readOnly": true}}
		podSpec["volumes"] = []any{map[string]any{"name": want.Volume, "secret": map[string]any{"secretName": want.Secret}}}
		pathVolume := pathVolumesList + `[name="` + want.Volume + `"]`
		allowed = append(allowed, pathCertEnv, pathCertMount, pathVolume)
		done = done && envValue(mm, envTLSKeyCertPath) == certFile && mounted(mm, want.Volume) && hasSecretVolume(d, want.Volume, want.Secret)
		if envValue(mm, envTLSKeyCertPath) != certFile {
			ownedBy = append(ownedBy, otherOwners(d.ManagedFields, pathCertEnv+".value")...)
		}
	}
	container["env"] = env
	cfg = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": d.Name, "namespace": d.Namespace, "uid": string(d.UID)},
		"spec":     map[string]any{"template": map[string]any{"spec": podSpec}},
	}}
	return cfg, done && !stale(mine, allowed), "", ownedBy
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
		cfg, done, problem, ownedBy := planModelMesh(d, want)
		fix := fmt.Sprintf("add %s to ModelMesh's payloadProcessors (ConfigMap model-serving-config), which sets the variable, and the operator finds it there", want.URL)
		switch {
		case problem != "":
			outs = append(outs, outcome{kind: kind, name: d.Name, state: unfit, detail: problem})
			continue
		case done:
			outs = append(outs, outcome{kind: kind, name: d.Name})
			continue
		case len(ownedBy) > 0:
			outs = append(outs, outcome{kind: kind, name: d.Name, state: ownedElsewhere, detail: fmt.Sprintf("%s %s: container mm's %s is set by %s; the operator does not force it: %s", kind, d.Name, envPayloadProcessors, quoted(ownedBy), fix)})
			continue
		case !k.budget.allows(d.UID, time.Now()):
			outs = append(outs, outcome{kind: kind, name: d.Name, state: reverted, detail: revertedDetail(kind, d.Name, d.ManagedFields)})
			continue
		}
		o, err := k.applyWired(ctx, cr, cfg, kind, fix,
			eventInferenceServiceConfigured, fmt.Sprintf("ModelMesh Deployment %s sends its payloads to %s", d.Name, want.URL))
		if err != nil {
			return nil, err
		}
		if o.state == configured {
			k.budget.record(d.UID, time.Now())
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// unwireModelMesh gives back what the wiring applied to the namespace's
// ModelMesh Deployments: the processor (the variable goes when the wiring
// alone set it), the certificate's volume, mount and variable.
func (k *Kind) unwireModelMesh(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	ds, err := k.modelMeshDeployments(ctx, cr.Namespace)
	if err != nil {
		return err
	}
	for i := range ds {
		if !ownsFields(&ds[i]) {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace(ds[i].Namespace)
		u.SetName(ds[i].Name)
		u.SetUID(ds[i].UID)
		if err := k.release(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// quoted lists manager names as the API server's conflicts do.
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
