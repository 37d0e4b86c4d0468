package lmeval

import (
	"encoding/json"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// Chart is the chart of the kind (charts/lmeval-job).
const Chart = "lmeval-job"

// Values are the chart's values for the job: its pod (PodSpec, with labels
// and annotations), the driver's ServiceAccount and the managed PVC. labels
// are the operator's labels for every object (the tenant boundary's
// ownership label among them). The job must be valid (ManagedPVCSize).
//
// caBundle is the job's merged CA bundle ("" for none: MergeCABundle).
// place is a Kueue admission's placement of the pod (nil: not queued).
func Values(job *lmv1alpha1.LMEvalJob, s Settings, p Permits, labels map[string]string, caBundle string, place *Placement) (map[string]any, error) {
	spec := PodSpec(job, s, p, caBundle != "")
	podLabels := PodLabels(job, labels)
	annotations := PodAnnotations(job)
	if place != nil {
		// Admitted through the job's Workload: the pod carries no queue
		// label, so that Kueue's pod integration does not queue it again.
		delete(podLabels, KueueQueueLabel)
		delete(podLabels, KueuePriorityLabel)
		spec.NodeSelector = merged(spec.NodeSelector, place.NodeSelector)
		spec.Tolerations = append(spec.Tolerations, place.Tolerations...)
		for k, v := range place.Labels {
			if _, ours := podLabels[k]; !ours {
				podLabels[k] = v
			}
		}
		for k, v := range place.Annotations {
			if _, ours := annotations[k]; !ours {
				annotations[k] = v
			}
		}
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var specMap map[string]any
	if err := json.Unmarshal(raw, &specMap); err != nil {
		return nil, err
	}
	annotations[AnnotationSpecHash] = SpecHash(&job.Spec)
	names := NamesOf(job.Name)
	size, _ := ManagedPVCSize(&job.Spec)
	return map[string]any{
		"name": job.Name,
		"pod": map[string]any{
			"labels":      toAny(podLabels),
			"annotations": toAny(annotations),
			"spec":        specMap,
		},
		"labels":         toAny(labels),
		"serviceAccount": names.ServiceAccount,
		"managedPVC":     map[string]any{"name": names.ManagedPVC, "size": size},
		"caBundle":       map[string]any{"name": CABundleName(job.Name), "key": CABundleKey, "data": caBundle},
	}, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
