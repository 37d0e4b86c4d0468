package runconfig

import (
	"fmt"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// FieldPath is the CR path of the field this package renders.
const FieldPath = "spec.server.config"

// fieldErrorf returns the InvalidSpec *status.Failure of the field at FieldPath + sub.
func fieldErrorf(sub, format string, args ...any) *status.Failure {
	return status.Invalid(FieldPath+sub, "%s", fmt.Sprintf(format, args...))
}
