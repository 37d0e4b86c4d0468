package status

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The shared checks name the field, and a long value is cut in the message.
func TestChecks(t *testing.T) {
	assert.NoError(t, IntOrPercent("f", nil))
	assert.NoError(t, IntOrPercent("f", &intstr.IntOrString{Type: intstr.String, StrVal: "50%"}))
	assert.NoError(t, IntOrPercent("f", &intstr.IntOrString{Type: intstr.Int, IntVal: 0}))
	for _, v := range []intstr.IntOrString{{Type: intstr.Int, IntVal: -1}, {Type: intstr.String, StrVal: "half"}, {Type: intstr.String, StrVal: "%"}} {
		err := IntOrPercent("spec.pdb.minAvailable", &v)
		var f *Failure
		if assert.ErrorAs(t, err, &f) {
			assert.Equal(t, "spec.pdb.minAvailable", f.Field)
		}
	}
	long := strings.Repeat("x", 10<<10)
	assert.Less(t, len(Quote(long)), 100)
	assert.Contains(t, Quote(long), "10240 bytes")
	assert.Equal(t, `"a"`, Quote("a"))
	err := CheckName("spec.x", "Bad_Name", validation.IsDNS1123Subdomain, "ConfigMap name")
	var f *Failure
	if assert.ErrorAs(t, err, &f) {
		assert.Equal(t, "spec.x", f.Field)
		assert.Contains(t, err.Error(), "not a valid ConfigMap name")
	}
	assert.NoError(t, CheckName("spec.x", "good", validation.IsDNS1123Subdomain, "ConfigMap name"))
}
