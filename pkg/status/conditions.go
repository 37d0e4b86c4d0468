package status

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types shared by the kinds.
const (
	// TypeReady says the workload serves the current spec.
	TypeReady = "Ready"
	// TypeReconciled says the chart was rendered and applied for the current spec.
	TypeReconciled = "Reconciled"
	// TypeDeploymentReady says the Deployment has its desired replicas available.
	TypeDeploymentReady = "DeploymentReady"
	// TypeServiceReady says the Service exists.
	TypeServiceReady = "ServiceReady"
	// TypeStorageReady says the storage asked for is there and bound (or none is asked for).
	TypeStorageReady = "StorageReady"
	// TypeTrustReady says the CA sources merged into the mounted bundle (or none applies).
	TypeTrustReady = "TrustReady"
)

// Reasons of the Reconciled condition that the reconciler and the kinds share.
const (
	// ReasonInvalidSpec: the user must change the spec.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonNameConflict: a name the operator needs is taken by an object it did not create.
	ReasonNameConflict = "NameConflict"
	// ReasonReleaseBusy: the release is pending, younger than the grace period.
	ReasonReleaseBusy = "ReleaseBusy"
	// ReasonInvalidOperatorSettings: the administrator must fix the operator's settings.
	ReasonInvalidOperatorSettings = "InvalidOperatorSettings"
	// ReasonOperatorForbidden: the API server refuses the operator a write
	// its installation should allow (a missing role, a changed ClusterRole):
	// the administrator must fix the installation.
	ReasonOperatorForbidden = "OperatorForbidden"
	// ReasonInstallFailed, ReasonUpgradeFailed: Helm's install or upgrade
	// failed for a reason the user does not fix; retried with backoff.
	ReasonInstallFailed = "InstallFailed"
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonDriftRepairFailed: restoring the release's objects failed; retried.
	ReasonDriftRepairFailed = "DriftRepairFailed"
	// ReasonUninstallFailed: the uninstall failed; the finalizer holds and it is retried.
	ReasonUninstallFailed = "UninstallFailed"
	// ReasonReleaseUnreadable: the release records could not be read; retried.
	ReasonReleaseUnreadable = "ReleaseUnreadable"
	// ReasonReleaseLocked: a release left pending could not be marked failed; retried.
	ReasonReleaseLocked = "ReleaseLocked"
	// ReasonReleaseNotRecorded: Helm applied the objects and failed to store
	// the release record; retried.
	ReasonReleaseNotRecorded = "ReleaseNotRecorded"
)

// Transition is a condition whose status changed (or that is new), for an event.
type Transition struct {
	Condition metav1.Condition
}

// Set sets a condition, stamping observedGeneration, and keeps
// lastTransitionTime when the status is unchanged.
func Set(conds *[]metav1.Condition, c metav1.Condition, generation int64, now metav1.Time) {
	c.Message = capMessage(c.Message)
	c.ObservedGeneration = generation
	c.LastTransitionTime = now
	meta.SetStatusCondition(conds, c)
}

// Transitions lists the conditions of after whose status differs from before, in after's order.
func Transitions(before, after []metav1.Condition) []Transition {
	var out []Transition
	for _, c := range after {
		prev := meta.FindStatusCondition(before, c.Type)
		switch {
		case prev == nil:
			out = append(out, Transition{Condition: c})
		case prev.Status != c.Status:
			out = append(out, Transition{Condition: c})
		}
	}
	return out
}

// MaxMessage bounds condition messages: they quote user input (a 10 KiB
// string in a field) and API server errors, and a status is read by people.
const MaxMessage = 1024

// capMessage cuts a message to MaxMessage bytes on a rune boundary.
func capMessage(m string) string {
	if len(m) <= MaxMessage {
		return m
	}
	const tail = " [cut]"
	cut := MaxMessage - len(tail)
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + tail
}
