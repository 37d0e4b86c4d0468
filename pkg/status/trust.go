package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
)

// TrustCondition is TrustReady: whether the CA sources that apply merged
// into the mounted bundle, and on a failure which bundle stays mounted.
func TrustCondition(o trust.Outcome) metav1.Condition {
	c := metav1.Condition{Type: TypeTrustReady}
	switch {
	case o.Failed():
		c.Status, c.Reason = metav1.ConditionFalse, o.Reason
		c.Message = o.Message
		if o.LastGood != "" {
			c.Message += "; the last good bundle stays mounted and nothing restarts"
		} else {
			c.Message += "; no bundle is mounted until this is fixed"
		}
	case !o.Wanted || o.Bundle == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "NoCustomTrust", "no CA source applies; the image's own trust store is used"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, "BundleMerged"
		c.Message = fmt.Sprintf("%d certificates merged from %s", o.Bundle.Certificates, strings.Join(o.Sources, ", "))
	}
	return c
}
