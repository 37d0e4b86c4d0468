package runconfig

import "fmt"

// FieldPath is the CR path of the field this package renders.
const FieldPath = "spec.server.config"

// FieldError is an invalid field of spec.server.config: the user fixes it by
// editing the CR.
type FieldError struct {
	// Field is the CR path of the field, e.g. spec.server.config.models[2].providerId.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// fieldErrorf returns a *FieldError for the field at FieldPath + sub.
func fieldErrorf(sub, format string, args ...any) *FieldError {
	return &FieldError{Field: FieldPath + sub, Message: fmt.Sprintf(format, args...)}
}
