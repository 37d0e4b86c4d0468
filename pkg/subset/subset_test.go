package subset

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOf(t *testing.T) {
	tests := []struct {
		name       string
		want, have string
		contained  bool
	}{
		{"equal", `{"a":1}`, `{"a":1}`, true},
		{"server defaults", `{"spec":{"replicas":1}}`, `{"spec":{"replicas":1,"revisionHistoryLimit":10}}`, true},
		{"changed value", `{"spec":{"replicas":1}}`, `{"spec":{"replicas":5}}`, false},
		{"missing field", `{"spec":{"replicas":1}}`, `{"spec":{}}`, false},
		{"null is absent", `{"spec":{"x":null}}`, `{"spec":{}}`, true},
		{"list element defaults", `{"c":[{"name":"a"}]}`, `{"c":[{"name":"a","terminationMessagePath":"/dev/termination-log"}]}`, true},
		{"list element changed", `{"c":[{"name":"a","image":"x"}]}`, `{"c":[{"name":"a","image":"y"}]}`, false},
		{"list length", `{"c":[1,2]}`, `{"c":[1]}`, false},
		{"list order", `{"c":[1,2]}`, `{"c":[2,1]}`, false},
		{"empty map", `{"emptyDir":{}}`, `{"emptyDir":{}}`, true},
		{"type mismatch", `{"a":{"b":1}}`, `{"a":[1]}`, false},
		{"string vs number", `{"a":"1"}`, `{"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.contained, Of(decode(t, tt.want), decode(t, tt.have)))
		})
	}
}
