package trustyai

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
)

// The model-server wiring is the one place the operator writes objects it
// did not create (docs/security.md): by server-side apply, with a field
// manager of its own, of the one field it owns, never forced, undone on
// delete, and switchable off.

// inferenceServiceGVK is KServe's InferenceService, an optional API.
var inferenceServiceGVK = schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}

// FieldManager owns what the wiring applies to model servers.
const FieldManager = "ai-stack-operator-trustyai"

// annotationDeploymentMode is KServe's; RawDeployment and Standard get the
// logger always, Serverless (and an InferenceService without the annotation,
// which KServe deploys in its cluster default) only with kServeServerless.
const annotationDeploymentMode = "serving.kserve.io/deploymentMode"

// TypeInferenceServicesPresent is upstream's condition of the wiring.
const TypeInferenceServicesPresent = "InferenceServicesPresent"

// wiring is what the wiring did, for the condition.
type wiring struct {
	ok              bool
	reason, message string
}

// loggerURL is where model servers send their inferences: the service's TLS
// endpoint where it has a certificate, plain http where it has none.
func loggerURL(cr *trustyv1.TrustyAIService, tlsMode string) string {
	scheme := "https"
	if tlsMode == tlsNone {
		scheme = "http"
	}
	return fmt.Sprintf("%s://%s.%s.svc.cluster.local", scheme, serviceName(cr.Name), cr.Namespace)
}

// eligible says whether an InferenceService gets the logger.
func eligible(isvc *unstructured.Unstructured, serverless bool) bool {
	switch isvc.GetAnnotations()[annotationDeploymentMode] {
	case "RawDeployment", "Standard":
		return true
	}
	return serverless
}

// ownsFields says whether the wiring's field manager owns fields of the object.
func ownsFields(obj *unstructured.Unstructured) bool {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == FieldManager {
			return true
		}
	}
	return false
}

// applyConfig is what the wiring applies: the logger, or nothing (which
// gives back every field the wiring owned).
func applyConfig(isvc *unstructured.Unstructured, url string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(inferenceServiceGVK)
	u.SetNamespace(isvc.GetNamespace())
	u.SetName(isvc.GetName())
	if url != "" {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"mode": "all", "url": url}, "spec", "predictor", "logger")
	}
	return u
}

// inferenceServices lists the namespace's InferenceServices, sorted by
// name; nil when the API is not served.
func (k *Kind) inferenceServices(ctx context.Context, ns string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(inferenceServiceGVK.GroupVersion().WithKind("InferenceServiceList"))
	if err := k.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list InferenceServices: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
	return list.Items, nil
}

// wire points the namespace's InferenceServices at the service. An
// InferenceService already pointed at it is not written again.
func (k *Kind) wire(ctx context.Context, cr *trustyv1.TrustyAIService, in *Inputs) (wiring, error) {
	s, p := in.values.Settings, in.values.Platform
	switch {
	case !s.Wiring:
		return wiring{reason: "WiringDisabled", message: "the operator setting " + KeyWiring + " is disabled: model servers are not pointed at the service"}, nil
	case !p.KServe:
		return wiring{reason: "InferenceServiceAPINotFound", message: "no KServe InferenceService API on this cluster"}, nil
	}
	isvcs, err := k.inferenceServices(ctx, cr.Namespace)
	if err != nil {
		return wiring{}, err
	}
	url := loggerURL(cr, p.tlsMode())
	want := map[string]any{"mode": "all", "url": url}
	var configured, elsewhere []string
	for i := range isvcs {
		isvc := &isvcs[i]
		if !eligible(isvc, s.Serverless) {
			if ownsFields(isvc) {
				// No longer ours to configure (the switch went off): give it back.
				if err := k.apply(ctx, applyConfig(isvc, "")); err != nil {
					return wiring{}, err
				}
			}
			continue
		}
		have, _, _ := unstructured.NestedMap(isvc.Object, "spec", "predictor", "logger")
		if reflect.DeepEqual(have, want) {
			configured = append(configured, isvc.GetName())
			continue
		}
		err := k.apply(ctx, applyConfig(isvc, url))
		switch {
		case apierrors.IsConflict(err):
			elsewhere = append(elsewhere, isvc.GetName())
		case err != nil:
			return wiring{}, err
		default:
			configured = append(configured, isvc.GetName())
			k.Recorder.Eventf(cr, corev1.EventTypeNormal, "InferenceServiceConfigured", "InferenceService %s logs its inferences to %s", isvc.GetName(), url)
		}
	}
	switch {
	case len(elsewhere) > 0:
		return wiring{reason: "FieldOwnedElsewhere", message: fmt.Sprintf("spec.predictor.logger of InferenceService %s is set by another manager; the operator does not force it: clear it there to let the service receive the inferences", strings.Join(elsewhere, ", "))}, nil
	case len(configured) == 0:
		return wiring{reason: "InferenceServicesNotFound", message: "no InferenceService in the namespace logs to this service yet"}, nil
	}
	return wiring{ok: true, reason: "InferenceServicesFound", message: fmt.Sprintf("InferenceService %s logs its inferences to %s", strings.Join(configured, ", "), url)}, nil
}

// unwire gives back what the wiring applied to the namespace's
// InferenceServices: a logger set by another manager stays.
func (k *Kind) unwire(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	isvcs, err := k.inferenceServices(ctx, cr.Namespace)
	if err != nil {
		return err
	}
	for i := range isvcs {
		if ownsFields(&isvcs[i]) {
			if err := k.apply(ctx, applyConfig(&isvcs[i], "")); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// apply server-side applies the wiring's own fields, never forced.
func (k *Kind) apply(ctx context.Context, u *unstructured.Unstructured) error {
	if err := k.Client.Patch(ctx, u, client.Apply, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("apply to InferenceService %s: %w", u.GetName(), err)
	}
	return nil
}
