package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
)

// Every kind the operator serves has a builder, and each builder makes a CR
// of its kind: a new kind's tests start from one (docs/adding-a-kind.md).
func TestThereIsABuilderForEveryServedKind(t *testing.T) {
	s := operator.Scheme()
	served := map[string]bool{}
	for _, k := range operator.Served() {
		gvk := k.GVK
		served[gvk.Kind] = true
		b, ok := Builders[gvk.Kind]
		if !assert.True(t, ok, "test/framework has no builder of %s: add one to Builders", gvk.Kind) {
			continue
		}
		obj := b("ns", "name")
		gvks, _, err := s.ObjectKinds(obj)
		require.NoError(t, err)
		assert.Contains(t, gvks, gvk, "the builder of %s makes a %T", gvk.Kind, obj)
		assert.Equal(t, "ns", obj.GetNamespace())
		assert.Equal(t, "name", obj.GetName())
	}
	for k := range Builders {
		assert.True(t, served[k], "Builders has %s, which the operator does not serve", k)
	}
}
