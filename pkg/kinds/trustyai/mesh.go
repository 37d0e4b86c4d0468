package trustyai

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
)

// Istio: a model server with an Istio sidecar cannot send its inferences to
// the service's https endpoint through the sidecar as they are (a
// DestinationRule that makes the sidecar speak TLS would wrap TLS in TLS).
// As upstream, the chart then renders DestinationRule <name>-internal (TLS
// to port 443 of Service <name>) and VirtualService <name>-redirect (its
// port 80 to 443), and such a model server logs in plain http to port 80:
// its sidecar sends it on to 443 over TLS.

// annotationIstioInject asks Istio for a sidecar in the model server's pods;
// upstream reads it on the InferenceService, exactly "true".
const annotationIstioInject = "sidecar.istio.io/inject"

// sidecarClient says whether an InferenceService gets the logger (eligible)
// and has an Istio sidecar: upstream's condition for the DestinationRule
// and VirtualService (its patchKServe, for the InferenceServices its
// handleInferenceServices configures).
func sidecarClient(isvc metav1.Object, serverless bool) bool {
	return eligible(isvc, serverless) && isvc.GetAnnotations()[annotationIstioInject] == "true"
}

// meshRoutes says whether the cluster can have the mesh's routes to the
// service: Istio's APIs, KServe's, and the service's https port (443
// exists only where a certificate has a creator; without it, routing port
// 80 to 443 would send the inferences nowhere).
func meshRoutes(p platform.Cluster) bool {
	return p.Istio && p.KServe && p.TLSMode() != platform.TLSNone
}

// sidecarClients says whether an InferenceService of the namespace is a
// sidecarClient, where the cluster can have the mesh's routes: the metadata
// of the namespace's InferenceServices, read from the API server (no cache
// of their own, no Secret, nothing written).
func (k *Kind) sidecarClients(ctx context.Context, ns string, p platform.Cluster, serverless bool) (bool, error) {
	if !meshRoutes(p) {
		return false, nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(platform.InferenceService.GroupVersion().WithKind("InferenceServiceList"))
	if err := k.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("list InferenceServices: %w", err)
	}
	for i := range list.Items {
		if sidecarClient(&list.Items[i], serverless) {
			return true, nil
		}
	}
	return false, nil
}

// sidecarLoggerURL is the logger URL of a sidecarClient where the mesh's
// routes exist: the service's plain http port, which the sidecar sends on
// over TLS. url is the service's https URL (loggerURL).
func sidecarLoggerURL(url string) string {
	if rest, ok := strings.CutPrefix(url, "https://"); ok {
		return "http://" + rest
	}
	return url
}
