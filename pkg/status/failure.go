package status

import "fmt"

// Failure is a problem the user (or the administrator) fixes: it is
// reported on the CR with its reason and is not retried with backoff until
// something changes. It is the one error type for that, from the
// translation, the settings, the typed run configuration and Gather alike.
type Failure struct {
	// Reason is a CamelCase reason for the Reconciled condition (InvalidSpec, NameConflict, ...).
	Reason string
	// Field names what to fix: a CR field path (spec.server.distribution.name)
	// or a settings key; empty when the message says it.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
	// Rendered names ("Kind/name") every object of a manifest refused
	// because objects were in its way: the status reads those that exist,
	// whoever made them, so that it tells what runs while the CR waits.
	// Empty for any other failure.
	Rendered []string
}

// Error is "field: message", or the message when no field is named.
func (f *Failure) Error() string {
	if f.Field == "" {
		return f.Message
	}
	return f.Field + ": " + f.Message
}

// Invalid is an InvalidSpec failure of a CR field.
func Invalid(field, format string, args ...any) *Failure {
	return &Failure{Reason: ReasonInvalidSpec, Field: field, Message: fmt.Sprintf(format, args...)}
}
