// Package status computes the status of the operator's custom resources from
// what was observed: pure functions, no API calls, no controller-runtime.
// Conditions keep their lastTransitionTime unless their status really changes,
// so that recomputing an unchanged state yields an identical status.
package status
