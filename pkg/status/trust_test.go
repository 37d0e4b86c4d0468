package status

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

func TestTrustCondition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      trust.Outcome
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"no source", trust.Outcome{}, metav1.ConditionTrue, "NoCustomTrust", "no CA source applies; the image's own trust store is used"},
		{"merged", trust.Outcome{Wanted: true, Sources: []string{"ConfigMap a/b", "public roots"}, Bundle: &trust.Bundle{Certificates: 3}}, metav1.ConditionTrue, "BundleMerged", "3 certificates merged from ConfigMap a/b, public roots"},
		{"failed, last good stays", trust.Outcome{Wanted: true, Reason: trust.ReasonInvalidCertificate, Message: "bad block", LastGood: "h"}, metav1.ConditionFalse, "InvalidCertificate", "bad block; the last good bundle stays mounted and nothing restarts"},
		{"failed, nothing mounted", trust.Outcome{Wanted: true, Reason: trust.ReasonConfigMapNotFound, Message: "missing"}, metav1.ConditionFalse, "ConfigMapNotFound", "missing; no bundle is mounted until this is fixed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := TrustCondition(tc.o)
			assert.Equal(t, TypeTrustReady, c.Type)
			assert.Equal(t, tc.status, c.Status)
			assert.Equal(t, tc.reason, c.Reason)
			assert.Equal(t, tc.msg, c.Message)
		})
	}
}

func TestFailureError(t *testing.T) {
	assert.Equal(t, "spec.a: must be set", Invalid("spec.a", "must be %s", "set").Error())
	assert.Equal(t, "InvalidSpec", Invalid("spec.a", "x").Reason)
	assert.Equal(t, "just a message", (&Failure{Reason: "R", Message: "just a message"}).Error())
}
