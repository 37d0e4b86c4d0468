package values

import "fmt"

// FieldError is an invalid CR field: the user fixes it by editing the CR.
type FieldError struct {
	// Field is the JSON path of the field, e.g. spec.server.distribution.name.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// Reason is the condition reason of a CR with this error.
func (e *FieldError) Reason() string { return "InvalidSpec" }
