// Package values translates typed custom resources into the Helm values of
// their charts. It is the mapping layer that keeps the CR API stable while the
// charts evolve: pure functions, no API calls, no controller-runtime.
//
// Errors that the user can fix in the CR are *FieldError values, naming the
// field and the fix; the controller turns them into a condition and an event.
package values
