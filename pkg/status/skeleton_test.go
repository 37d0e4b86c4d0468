package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The setter stamps the generation, keeps a transition's time while the
// status holds, and Keep keeps a condition as it stands.
func TestTheSetterIsBoundToGenerationAndTime(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	var list []metav1.Condition
	Observed{Generation: 3, Now: t0}.On(&list).Set(True("A", "R", "m"))
	got := meta.FindStatusCondition(list, "A")
	assert.Equal(t, int64(3), got.ObservedGeneration)
	assert.Equal(t, t0, got.LastTransitionTime)

	s := Observed{Generation: 4, Now: t1}.On(&list)
	s.Set(True("A", "R2", "m2"))
	got = meta.FindStatusCondition(list, "A")
	assert.Equal(t, t0, got.LastTransitionTime, "an unchanged status keeps its transition time")
	assert.Equal(t, int64(4), got.ObservedGeneration)
	assert.Equal(t, "R2", got.Reason)

	s.Keep("A", False("A", "Other", "x"))
	assert.Equal(t, "R2", meta.FindStatusCondition(list, "A").Reason, "Keep keeps what is there")
	s.Keep("B", Unknown("B", "Asked", "on its way"))
	assert.Equal(t, metav1.ConditionUnknown, meta.FindStatusCondition(list, "B").Status, "Keep sets what is not there")
	s.Remove("A")
	assert.Nil(t, meta.FindStatusCondition(list, "A"))
}

// Reconciled and Ready follow the failure first, then the gates.
func TestReconciledAndReadyFollowTheFailureThenTheGates(t *testing.T) {
	fail := &Failure{Reason: ReasonInvalidSpec, Field: "spec.x", Message: "bad"}
	up, down1, down2 := True("G0", "Up", "up"), False("G1", "Down1", "first"), False("G2", "Down2", "second")
	for name, c := range map[string]struct {
		got              metav1.Condition
		status           metav1.ConditionStatus
		reason, msg, typ string
	}{
		"reconciled":            {Observed{}.Reconciled(), metav1.ConditionTrue, ReasonReleaseApplied, "the chart is applied for the current spec", TypeReconciled},
		"not reconciled":        {Observed{Failure: fail}.Reconciled(), metav1.ConditionFalse, ReasonInvalidSpec, "spec.x: bad", TypeReconciled},
		"applied as":            {Observed{Failure: fail}.AppliedAs("Provisioned"), metav1.ConditionFalse, ReasonInvalidSpec, "spec.x: bad", "Provisioned"},
		"ready":                 {Observed{}.Ready("Ready", "runs", up), metav1.ConditionTrue, "Ready", "runs", TypeReady},
		"first gate down":       {Observed{}.Ready("Ready", "runs", up, down1, down2), metav1.ConditionFalse, "Down1", "first", TypeReady},
		"failure before gates":  {Observed{Failure: fail}.Ready("Ready", "runs", down1), metav1.ConditionFalse, ReasonInvalidSpec, "the current spec is not applied: spec.x: bad", TypeReady},
		"all ready":             {Observed{}.ReadyAll("All", "all up", up), metav1.ConditionTrue, "All", "all up", TypeReady},
		"every gate down named": {Observed{}.ReadyAll("All", "all up", down1, up, down2), metav1.ConditionFalse, ReasonComponentsNotReady, "G1: first; G2: second", TypeReady},
		"failure before all":    {Observed{Failure: fail}.ReadyAll("All", "all up", down1), metav1.ConditionFalse, ReasonInvalidSpec, "the current spec is not applied: spec.x: bad", TypeReady},
	} {
		assert.Equal(t, c.typ, c.got.Type, name)
		assert.Equal(t, c.status, c.got.Status, name)
		assert.Equal(t, c.reason, c.got.Reason, name)
		assert.Equal(t, c.msg, c.got.Message, name)
	}
}

// The stage is decided in order: deletion, failure, readiness, an applied chart.
func TestStageIsDecidedInOrder(t *testing.T) {
	fail := &Failure{Reason: ReasonInvalidSpec}
	ready, notReady := True(TypeReady, "R", ""), False(TypeReady, "N", "")
	for want, o := range map[Stage]struct {
		obs   Observed
		ready metav1.Condition
	}{
		StageTerminating:  {Observed{Deleting: true, Failure: fail, Applied: true}, ready},
		StageFailed:       {Observed{Failure: fail, Applied: true}, ready},
		StageReady:        {Observed{Applied: true}, ready},
		StageInitializing: {Observed{Applied: true}, notReady},
		StagePending:      {Observed{}, notReady},
	} {
		assert.Equal(t, want, o.obs.Stage(o.ready))
	}
}
