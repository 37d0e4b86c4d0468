package trustyai

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// spec.metrics.schedule is SERVICE_METRICS_SCHEDULE, which the service
// parses with isodate.parse_duration first, then as one whole number and one
// unit s, m, h or d; it replaces what it cannot parse with 30 seconds, reads
// no years or months (isodate's Duration.total_seconds() leaves them out),
// rounds down to whole seconds, computes without a pause at 0, and fails at
// start past timedelta's 999999999 days. The CRD's three rules on the field
// (pkg/apis/trustyai/v1) admit what the service reads as written, at least 1
// second; checkSchedule is the same rules, with the same messages, for CRs
// stored before the CRD had them.

var (
	// scheduleSimple is the service's own form: a whole number and a unit.
	scheduleSimple = regexp.MustCompile(`^[0-9]+[smhd]$`)
	// scheduleISO is isodate's duration without sign, years and months.
	scheduleISO = regexp.MustCompile(`^P([0-9]+([.,][0-9]+)?W)?([0-9]+([.,][0-9]+)?D)?(T([0-9]+([.,][0-9]+)?H)?([0-9]+([.,][0-9]+)?M)?([0-9]+([.,][0-9]+)?S)?)?$`)
	// scheduleParts are the components of an ISO duration.
	scheduleParts = regexp.MustCompile(`[0-9]+([.,][0-9]+)?[WDHMS]`)
)

// The CRD's messages of its rules on spec.metrics.schedule.
const (
	scheduleFormMessage  = "must be an ISO-8601 duration in weeks, days, hours, minutes and seconds (PT30S, PT5M, PT1H30M, P1D, P1DT2H30M45S, PT1.5S) or a whole number with one unit s, m, h or d (30s, 5m, 2h, 1d): the forms the service parses; it replaces any other (1h30m, 1.5m, 500ms) with 30s and reads no years or months (P1M)"
	scheduleShortMessage = "must be at least 1 second: the service rounds it down to whole seconds and, at 0 (0s, PT, PT0S, PT0.5S), computes metrics without a pause"
	scheduleLongMessage  = "must be shorter than 1000000000 days, the longest ISO-8601 duration the service holds"
)

// scheduleLimit is timedelta's bound, in seconds: 1000000000 days.
const scheduleLimit = 86400000000000.0

// isoSeconds adds up an ISO duration's components, as the CRD's rules do.
func isoSeconds(s string) float64 {
	unit := map[byte]float64{'W': 604800, 'D': 86400, 'H': 3600, 'M': 60, 'S': 1}
	total := 0.0
	for _, p := range scheduleParts.FindAllString(s, -1) {
		n, _ := strconv.ParseFloat(strings.ReplaceAll(p[:len(p)-1], ",", "."), 64)
		total += n * unit[p[len(p)-1]]
	}
	return total
}

// checkSchedule refuses a schedule the CRD refuses, with its message.
func checkSchedule(s string) error {
	const field = "spec.metrics.schedule"
	switch {
	case s == "":
		return status.Invalid(field, "is required: how often metrics are computed, such as 5s or PT5M")
	case utf8.RuneCountInString(s) > 32:
		return status.Invalid(field, "must be at most 32 characters, got %d", utf8.RuneCountInString(s))
	case scheduleSimple.MatchString(s):
		if strings.Trim(s[:len(s)-1], "0") == "" {
			return status.Invalid(field, "%s, got %q", scheduleShortMessage, s)
		}
		return nil
	case !scheduleISO.MatchString(s):
		return status.Invalid(field, "%s, got %q", scheduleFormMessage, s)
	case isoSeconds(s) < 1:
		return status.Invalid(field, "%s, got %q", scheduleShortMessage, s)
	case isoSeconds(s) >= scheduleLimit:
		return status.Invalid(field, "%s, got %q", scheduleLongMessage, s)
	}
	return nil
}
