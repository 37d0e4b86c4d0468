package trustyai

import (
	"context"
	"math"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-stack-operator/ai-stack-operator/config/crd"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/admission"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// serviceSchedule is what the TrustyAI service (Python) makes of
// SERVICE_METRICS_SCHEDULE: PrometheusScheduler._parse_schedule_interval,
// isodate.parse_duration first (isodate 0.7.2's regular expression, whose
// Duration.total_seconds() is its timedelta's, years and months left out),
// then one int() and a unit s, m, h or d; get_service_config replaces a
// ValueError with 30. seconds is int(total_seconds()); dropped says years
// or months were given and left out; crash is timedelta's OverflowError,
// which nothing catches. isodate's alternative format (P0001-02-03T04:05:06)
// is not modelled: it has years and months, so counts as dropped.
type serviceSchedule struct {
	seconds         int64
	parsed, dropped bool
	crash           bool
}

// isodatePeriod is isodate's ISO8601_PERIOD_REGEX; Python's "$" also matches
// before a final newline, and P(?!\b) wants a word character after the P.
var isodatePeriod = regexp.MustCompile(`^([+-])?P(?:([0-9]+(?:[,.][0-9]+)?)Y)?(?:([0-9]+(?:[,.][0-9]+)?)M)?(?:([0-9]+(?:[,.][0-9]+)?)W)?(?:([0-9]+(?:[,.][0-9]+)?)D)?(?:(T)(?:([0-9]+(?:[,.][0-9]+)?)H)?(?:([0-9]+(?:[,.][0-9]+)?)M)?(?:([0-9]+(?:[,.][0-9]+)?)S)?)?\n?$`)

// pythonInt is what Python's int() takes (ASCII only).
var pythonInt = regexp.MustCompile(`^[ \t\n\r\f\v]*[+-]?[0-9](_?[0-9])*[ \t\n\r\f\v]*$`)

func parseAsService(s string) serviceSchedule {
	if m := isodatePeriod.FindStringSubmatch(s); m != nil {
		rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-"), "P")
		if rest != "" && rest != "\n" && rest[0] != '\n' {
			num := func(g string) float64 {
				if g == "" {
					return 0
				}
				f, _ := strconv.ParseFloat(strings.ReplaceAll(g, ",", "."), 64)
				return f
			}
			total := num(m[4])*604800 + num(m[5])*86400 + num(m[7])*3600 + num(m[8])*60 + num(m[9])
			micro := math.RoundToEven(total * 1e6)
			if micro >= 86400*1e6*1e9 {
				return serviceSchedule{crash: true}
			}
			secs := int64(micro / 1e6)
			if m[1] == "-" {
				secs = -secs
			}
			return serviceSchedule{seconds: secs, parsed: true, dropped: num(m[2]) != 0 || num(m[3]) != 0}
		}
	}
	if strings.HasPrefix(s, "P") && regexp.MustCompile(`^P[0-9]{4}-?([0-9]{2}-?[0-9]{2}|[0-9]{3})T`).MatchString(s) {
		return serviceSchedule{parsed: true, dropped: true}
	}
	units := map[byte]int64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}
	if s == "" || units[s[len(s)-1]] == 0 || !pythonInt.MatchString(s[:len(s)-1]) {
		return serviceSchedule{seconds: 30}
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s[:len(s)-1]), "_", ""), 10, 64)
	if err != nil {
		// Beyond int64: Python's int has no bound, and sleeps that long.
		return serviceSchedule{seconds: math.MaxInt64, parsed: true}
	}
	return serviceSchedule{seconds: n * units[s[len(s)-1]], parsed: true}
}

// readAsWritten: the service computes every so many seconds, as written.
func (s serviceSchedule) readAsWritten() bool {
	return s.parsed && !s.dropped && !s.crash && s.seconds >= 1
}

// canonical says whether a string is in the forms the CRD describes: no
// sign, blank, underscore, final newline, alternative format, years or
// months (not even 0), and not in the sliver below 1 s that timedelta rounds
// up to 1 s (PT0.9999999S: the rules want the sum at 1 s at least).
func canonical(s string) bool {
	if regexp.MustCompile(`^[0-9]+[smhd]$`).MatchString(s) {
		return true
	}
	date, _, _ := strings.Cut(s, "T")
	return regexp.MustCompile(`^P[0-9.,WDTHMS]*$`).MatchString(s) && !strings.Contains(date, "M") && isoSeconds(s) >= 1
}

// scheduleAdmission admits a TrustyAIService of the given version and
// schedule as the API server does (schema, then CEL); nil when admitted.
type scheduleAdmission func(version, schedule string) error

func newScheduleAdmission(t *testing.T) scheduleAdmission {
	t.Helper()
	crds, err := crd.All()
	require.NoError(t, err)
	adm, err := admission.NewAdmission(crds)
	require.NoError(t, err)
	return func(version, schedule string) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "trustyai.opendatahub.io/" + version, "kind": "TrustyAIService",
			"metadata": map[string]any{"name": "t", "namespace": "team-a"},
			"spec": map[string]any{
				"storage": map[string]any{"format": "PVC", "folder": "/inputs", "size": "1Gi"},
				"data":    map[string]any{"filename": "data.csv", "format": "CSV"},
				"metrics": map[string]any{"schedule": schedule},
			},
		}}
		return adm.Admit(context.Background(), u)
	}
}

// The service's own examples and the ones that trip it up: the CRD (v1 and
// v1alpha1 alike) and the operator's check admit what the service reads as
// written, and refuse the rest, each with the message of its rule.
func TestScheduleAdmitsWhatTheServiceParses(t *testing.T) {
	const narrowed = "narrowed"
	admit := newScheduleAdmission(t)
	in := inputs(defaults, release.NewCapabilities()).values
	for s, want := range map[string]string{
		// Admitted: ISO-8601, as the service's tests use it, and its own form.
		"PT30S": "", "PT1S": "", "PT5M": "", "PT1H30M": "", "PT2H": "", "PT24H": "", "P1D": "", "P2D": "",
		"P1DT2H30M45S": "", "PT1.5S": "", "PT0.5H": "", "PT0.25M": "", "PT1,5S": "", "P2W": "", "P1W2DT3H": "",
		"P1DT": "", "PT0.02M": "", "PT86399999999999S": "",
		"30s": "", "1s": "", "60s": "", "5m": "", "2h": "", "1d": "", "05s": "", "5000s": "",
		"99999999999999999999999999999d": "",
		// Not parsed: the service computes every 30 s instead.
		"1h30m": scheduleFormMessage, "1.5m": scheduleFormMessage, "500ms": scheduleFormMessage, "30x": scheduleFormMessage,
		"abc": scheduleFormMessage, "invalid": scheduleFormMessage, "5": scheduleFormMessage, "5S": scheduleFormMessage,
		"pt5s": scheduleFormMessage, "PT5s": scheduleFormMessage, "P5": scheduleFormMessage, "PT.5S": scheduleFormMessage,
		"PT1.S": scheduleFormMessage, "PT5S ": scheduleFormMessage, "PT1H1H": scheduleFormMessage, "PT5M1H": scheduleFormMessage,
		// Python's int() and isodate take a sign, blanks and underscores, which
		// the forms leave out (and no CRD admitted before).
		"5 s": narrowed, " 5s": narrowed, "+5s": narrowed, "1_0s": narrowed, "+PT5S": narrowed,
		// Years and months: left out (P1M is 0 s to the service).
		"P1M": scheduleFormMessage, "P1Y": scheduleFormMessage, "P1Y2D": scheduleFormMessage, "P0001-01-01T00:00:00": scheduleFormMessage,
		// Signed: -PT5S is -5 s, no pause.
		"-PT5S": scheduleFormMessage, "-5s": scheduleFormMessage,
		// Zero, and below 1 s, which the service rounds down to 0: no pause.
		"0s": scheduleShortMessage, "00m": scheduleShortMessage, "0d": scheduleShortMessage, "PT0S": scheduleShortMessage,
		"PT": scheduleShortMessage, "P": scheduleShortMessage, "P0D": scheduleShortMessage, "PT0.5S": scheduleShortMessage,
		"PT0.01M": scheduleShortMessage, "P0W0DT0H0M0S": scheduleShortMessage, "PT0,999S": scheduleShortMessage,
		// Past timedelta's bound: the service fails at start.
		"P1000000000D": scheduleLongMessage, "P142857143W": scheduleLongMessage, "PT86400000000000S": scheduleLongMessage,
		"PT99999999999999999999H": scheduleLongMessage,
	} {
		svc := parseAsService(s)
		switch want {
		case "":
			assert.True(t, svc.readAsWritten(), "%q: the model of the service reads it as written: %+v", s, svc)
		case narrowed:
			assert.True(t, svc.readAsWritten(), "%q: the model of the service reads it as written: %+v", s, svc)
			want = scheduleFormMessage
		default:
			assert.False(t, svc.readAsWritten(), "%q: the model of the service does not read it as written: %+v", s, svc)
		}
		for _, version := range []string{"v1", "v1alpha1"} {
			err := admit(version, s)
			if want == "" {
				assert.NoError(t, err, "%s %q", version, s)
				continue
			}
			var refused *admission.Refused
			if assert.ErrorAs(t, err, &refused, "%s %q", version, s) {
				require.Len(t, refused.Errors, 1, "%s %q: %v", version, s, err)
				assert.Equal(t, "spec.metrics.schedule", refused.Errors[0].Field, "%s %q", version, s)
				assert.Equal(t, want, refused.Errors[0].Detail, "%s %q", version, s)
			}
		}
		err := checkSchedule(s)
		if want == "" {
			assert.NoError(t, err, s)
			continue
		}
		var f *status.Failure
		if assert.ErrorAs(t, err, &f, s) {
			assert.Equal(t, "spec.metrics.schedule", f.Field)
			assert.Contains(t, f.Message, want, s)
		}
		// translate refuses it too (a CR stored before the CRD's rules).
		_, err = translate(sample(t, func(cr *trustyv1.TrustyAIService) { cr.Spec.Metrics.Schedule = s }), in)
		assert.ErrorAs(t, err, &f, s)
	}
	// Over maxLength: the schema refuses it before the rules.
	assert.Error(t, admit("v1", "P"+strings.Repeat("1", 31)+"D"))
	assert.Error(t, checkSchedule("P"+strings.Repeat("1", 31)+"D"))
}

// Random schedules, made of the forms' own characters: the CRD, v1 and
// v1alpha1, and checkSchedule agree on each; what they admit the service
// reads as written, and what the service reads as written in the forms the
// CRD describes they admit.
func TestScheduleRulesMatchTheServiceOnRandomInput(t *testing.T) {
	admit := newScheduleAdmission(t)
	r := rand.New(rand.NewSource(1))
	num := func() string {
		n := []string{"0", "1", "00", "7", "30", "59", "60", "86399", "999999999", "1000000000", "0000000001"}[r.Intn(11)]
		if r.Intn(3) == 0 {
			n += []string{".", ","}[r.Intn(2)] + []string{"0", "5", "25", "999", "01", "9999999"}[r.Intn(6)]
		}
		return n
	}
	gen := func() string {
		var b strings.Builder
		switch r.Intn(3) {
		case 0: // The service's own form, and near misses.
			b.WriteString(num())
			b.WriteString([]string{"s", "m", "h", "d", "ms", "S", "", "x", "h30m"}[r.Intn(9)])
		case 1: // ISO-8601, and near misses.
			b.WriteString([]string{"P", "P", "P", "-P", "+P", "p"}[r.Intn(6)])
			for _, u := range []string{"Y", "M", "W", "D"} {
				if r.Intn(4) == 0 {
					b.WriteString(num() + u)
				}
			}
			if r.Intn(3) != 0 {
				b.WriteString("T")
				for _, u := range []string{"H", "M", "S"} {
					if r.Intn(3) == 0 {
						b.WriteString(num() + u)
					}
				}
			}
		default: // Characters of both.
			const alphabet = "0123456789PTWDHMSYsmhd.,+- _"
			for n := 1 + r.Intn(10); n > 0; n-- {
				b.WriteByte(alphabet[r.Intn(len(alphabet))])
			}
		}
		return b.String()
	}
	admitted := 0
	for i := 0; i < 3000; i++ {
		s := gen()
		if len(s) > 32 {
			continue
		}
		v1, alpha, op := admit("v1", s) == nil, admit("v1alpha1", s) == nil, checkSchedule(s) == nil
		require.Equal(t, v1, alpha, "%q: v1 and v1alpha1 differ", s)
		require.Equal(t, v1, op, "%q: the CRD admits it (%v), checkSchedule not, or the other way round", s, v1)
		svc := parseAsService(s)
		if v1 {
			admitted++
			require.True(t, svc.readAsWritten(), "%q: admitted, but the service reads it as %+v", s, svc)
		} else if canonical(s) && svc.readAsWritten() {
			t.Fatalf("%q: the service reads it as written (%d s), but the CRD refuses it", s, svc.seconds)
		}
	}
	assert.Greater(t, admitted, 300, "the generator makes admitted schedules too")
}

// The CRD, as the API server validates CRDs: its rules compile, within the
// cost budgets (kubectl apply of the CRD would fail otherwise).
func TestTrustyAICRDIsValid(t *testing.T) {
	crds, err := crd.All()
	require.NoError(t, err)
	found := false
	for _, c := range crds {
		if c.Spec.Group != "trustyai.opendatahub.io" {
			continue
		}
		found = true
		internal := &apiextensions.CustomResourceDefinition{}
		require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c, internal, nil))
		for _, v := range internal.Spec.Versions {
			if v.Storage {
				internal.Status.StoredVersions = []string{v.Name}
			}
		}
		errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal)
		assert.Empty(t, errs.ToAggregate(), "the API server refuses the CRD")
	}
	assert.True(t, found)
}
