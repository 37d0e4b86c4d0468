package trustyai

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
)

// KServe: an InferenceService in RawDeployment or Standard mode (and, with
// kServeServerless, in Serverless or Knative mode) logs its inferences to the
// service through spec.predictor.logger.

// platform.InferenceService is KServe's InferenceService, an optional API.

// annotationDeploymentMode is KServe's. As upstream's handleInferenceServices:
// RawDeployment and Standard (KServe 0.17's name for it) get the logger
// always, Serverless and Knative (0.17's name for it) only with
// kServeServerless; any other value, and an InferenceService without the
// annotation, is skipped (ModelMesh's are wired through their Deployments).
const annotationDeploymentMode = "serving.kserve.io/deploymentMode"

// loggerURL is where model servers send their inferences: the service's TLS
// endpoint where it has a certificate, plain http where it has none.
func loggerURL(cr *trustyv1.TrustyAIService, tlsMode string) string {
	scheme := "https"
	if tlsMode == platform.TLSNone {
		scheme = "http"
	}
	return fmt.Sprintf("%s://%s.%s.svc.cluster.local", scheme, serviceName(cr.Name), cr.Namespace)
}

// eligible says whether an InferenceService gets the logger.
func eligible(isvc metav1.Object, serverless bool) bool {
	switch isvc.GetAnnotations()[annotationDeploymentMode] {
	case "RawDeployment", "Standard":
		return true
	case "Serverless", "Knative":
		return serverless
	}
	return false
}

// ownsFields says whether the wiring's field manager owns fields of the object.
func ownsFields(obj client.Object) bool {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == FieldManager {
			return true
		}
	}
	return false
}

// applyConfig is what the wiring applies: the logger, or nothing (which
// gives back every field the wiring owned). The UID makes the apply a
// precondition on the object listed, which an apply would otherwise create
// when it is gone.
func applyConfig(isvc *unstructured.Unstructured, url string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(platform.InferenceService)
	u.SetNamespace(isvc.GetNamespace())
	u.SetName(isvc.GetName())
	u.SetUID(isvc.GetUID())
	if url != "" {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"mode": "all", "url": url}, "spec", "predictor", "logger")
	}
	return u
}

// inferenceServices lists the namespace's InferenceServices, sorted by
// name; nil when the API is not served.
func (k *Kind) inferenceServices(ctx context.Context, ns string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(platform.InferenceService.GroupVersion().WithKind("InferenceServiceList"))
	if err := k.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list InferenceServices: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
	return list.Items, nil
}

// istioServed says whether the cluster serves Istio's DestinationRule and
// VirtualService APIs (where the service has TLS, the chart then renders
// the mesh's routes for sidecarClients).
func (k *Kind) istioServed() bool {
	if k.Capabilities == nil {
		return false
	}
	caps, err := k.Capabilities()
	return err == nil && platform.ClusterOf(caps).Istio
}

// wireInferenceServices points the namespace's InferenceServices at url;
// with Istio, a sidecarClient at the plain http port its sidecar sends on
// over TLS (sidecarLoggerURL).
func (k *Kind) wireInferenceServices(ctx context.Context, cr *trustyv1.TrustyAIService, url string, serverless bool) ([]outcome, error) {
	isvcs, err := k.inferenceServices(ctx, cr.Namespace)
	if err != nil {
		return nil, err
	}
	istio := k.istioServed()
	var outs []outcome
	for i := range isvcs {
		isvc := &isvcs[i]
		url := url
		if istio && sidecarClient(isvc, serverless) {
			url = sidecarLoggerURL(url)
		}
		want := map[string]any{"mode": "all", "url": url}
		if !eligible(isvc, serverless) {
			if ownsFields(isvc) {
				// No longer ours to configure (the switch went off): give it back.
				if err := k.release(ctx, applyConfig(isvc, "")); err != nil {
					return nil, err
				}
			}
			continue
		}
		have, _, _ := unstructured.NestedMap(isvc.Object, "spec", "predictor", "logger")
		if reflect.DeepEqual(have, want) {
			outs = append(outs, outcome{kind: "InferenceService", name: isvc.GetName()})
			continue
		}
		const fix = "clear spec.predictor.logger there to let the service receive the inferences"
		var ownedBy []string
		for _, f := range []string{"url", "mode"} {
			if have[f] != want[f] {
				ownedBy = append(ownedBy, otherOwners(isvc.GetManagedFields(), ".spec.predictor.logger."+f)...)
			}
		}
		switch {
		case len(ownedBy) > 0:
			// Changing what another manager owns would conflict: say so without writing.
			outs = append(outs, outcome{kind: "InferenceService", name: isvc.GetName(), state: ownedElsewhere, detail: fmt.Sprintf("InferenceService %s: spec.predictor.logger is set by %s; the operator does not force it: %s", isvc.GetName(), quoted(slices.Compact(ownedBy)), fix)})
			continue
		case !k.budget.allows(budgetKey(cr, isvc.GetUID()), time.Now()):
			outs = append(outs, outcome{kind: "InferenceService", name: isvc.GetName(), state: reverted, detail: revertedDetail("InferenceService", isvc.GetName(), isvc.GetManagedFields())})
			continue
		}
		o, err := k.applyWired(ctx, cr, applyConfig(isvc, url), "InferenceService", fix,
			eventInferenceServiceConfigured, fmt.Sprintf("InferenceService %s logs its inferences to %s", isvc.GetName(), url))
		if err != nil {
			return nil, err
		}
		if o.state == configured {
			k.budget.record(budgetKey(cr, isvc.GetUID()), time.Now())
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// unwireInferenceServices gives back the logger the wiring applied: a logger
// set by another manager stays.
func (k *Kind) unwireInferenceServices(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	isvcs, err := k.inferenceServices(ctx, cr.Namespace)
	if err != nil {
		return err
	}
	for i := range isvcs {
		if ownsFields(&isvcs[i]) {
			if err := k.release(ctx, applyConfig(&isvcs[i], "")); err != nil {
				return err
			}
		}
	}
	return nil
}
