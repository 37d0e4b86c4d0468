package status

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Quote quotes a value for a message, cut so that a 10 KiB string does not
// become a 10 KiB condition.
func Quote(s string) string {
	const maxQuoted = 64
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// CheckName refuses a value that validate (one of k8s.io/apimachinery's
// validation functions) refuses, naming the field and what it must be.
func CheckName(field, value string, validate func(string) []string, what string) error {
	if errs := validate(value); len(errs) > 0 {
		return Invalid(field, "%s is not a valid %s: %s", Quote(value), what, strings.Join(errs, "; "))
	}
	return nil
}

var percent = regexp.MustCompile(`^[0-9]+%$`)

// IntOrPercent refuses what the API server would refuse in a
// PodDisruptionBudget: a negative number, or a string that is not a
// percentage.
func IntOrPercent(field string, v *intstr.IntOrString) error {
	switch {
	case v == nil:
		return nil
	case v.Type == intstr.Int && v.IntVal < 0:
		return Invalid(field, "%d is negative; give a number of pods (0 or more) or a percentage such as 50%%", v.IntVal)
	case v.Type == intstr.String && !percent.MatchString(v.StrVal):
		return Invalid(field, "%s is neither a number of pods nor a percentage such as 50%%", Quote(v.StrVal))
	}
	return nil
}
