// Package podspec computes the parts of a server pod that the server kinds
// share: the container's resources and the HPA's minimum, as the upstream
// operators compute them.
package podspec

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// defaultMemoryRequest is the memory request when the user gives none (not per worker).
var defaultMemoryRequest = resource.MustParse("1Gi")

// Resources returns the container resources, as upstream computes them:
// the user's, field by field, with the gaps filled. A CPU request that is
// missing or zero becomes one CPU per worker (workers: workers
// when above 0, else 1); a memory request that is missing or zero becomes
// 1Gi (whatever the workers); either is capped at the user's limit, if
// lower. Only when workers is set, a CPU or memory limit that is missing or
// zero becomes the request. Requests are always set, so that an HPA on
// utilization has something to measure against.
func Resources(r corev1.ResourceRequirements, workers *int32) *corev1.ResourceRequirements {
	out := r.DeepCopy()
	n, workersSet := int64(1), workers != nil && *workers > 0
	if workersSet {
		n = int64(*workers)
	}
	missing := func(l corev1.ResourceList, name corev1.ResourceName) bool {
		q, ok := l[name]
		return !ok || q.IsZero()
	}
	if out.Requests == nil {
		out.Requests = corev1.ResourceList{}
	}
	defaults := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(n, resource.DecimalSI), corev1.ResourceMemory: defaultMemoryRequest.DeepCopy()}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if !missing(out.Requests, name) {
			continue
		}
		q := defaults[name]
		// Never above the user's limit, which the API server would refuse
		// (upstream would render it); Kubernetes itself defaults a missing
		// request to the limit.
		if l, ok := out.Limits[name]; ok && !l.IsZero() && l.Cmp(q) < 0 {
			q = l.DeepCopy()
		}
		out.Requests[name] = q
	}
	if workersSet {
		if out.Limits == nil {
			out.Limits = corev1.ResourceList{}
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if missing(out.Limits, name) {
				out.Limits[name] = out.Requests[name].DeepCopy()
			}
		}
	}
	// Quantities marshal in canonical form (1000m -> "1"), as the API server stores them.
	return out
}

// HPAMinReplicas is the HPA's minimum, as the upstream operators compute
// it: the largest of 1, the replicas and minReplicas; unlike upstream
// (whose HPA the API server then refuses), capped at maxReplicas.
func HPAMinReplicas(replicas int32, minReplicas *int32, maxReplicas int32) *int32 {
	m := max(int32(1), replicas)
	if minReplicas != nil {
		m = max(m, *minReplicas)
	}
	if maxReplicas > 0 {
		m = min(m, maxReplicas)
	}
	return &m
}
