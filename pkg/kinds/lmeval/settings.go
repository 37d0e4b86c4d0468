package lmeval

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
)

// The keys of the operator's settings that concern LMEvalJobs: upstream's
// names (controllers/lmes/constants.go), read from this operator's settings
// ConfigMap and, where it lacks one, from upstream's ConfigMap
// (trustyai-service-operator-config in the operator's namespace), so that
// values an administrator set for the trustyai-service-operator carry over.
const (
	KeyPodImage            = "lmes-pod-image"
	KeyDriverImage         = "lmes-driver-image"
	KeyPodCheckingInterval = "lmes-pod-checking-interval"
	KeyImagePullPolicy     = "lmes-image-pull-policy"
	KeyMaxBatchSize        = "lmes-max-batch-size"
	KeyDefaultBatchSize    = "lmes-default-batch-size"
	KeyDetectDevice        = "lmes-detect-device"
	KeyAllowOnline         = "lmes-allow-online"
	KeyAllowCodeExecution  = "lmes-allow-code-execution"
	// KeyDriverPort is read and checked but has no effect: upstream's driver
	// serves HTTP on it for the operator's exec calls; this one reports
	// through the job's status and serves nothing.
	KeyDriverPort = "lmes-driver-port"
)

// The Open Data Hub operator's ConfigMap in the operator's namespace, made
// from the DataScienceCluster's eval.lmeval settings. When it exists, its two
// keys decide both permits (a missing or unreadable key denies), over every
// other setting, as upstream's controllers/dsc reads it.
const (
	DSCConfigMap              = "trustyai-dsc-config"
	DSCKeyPermitOnline        = "eval.lmeval.permitOnline"
	DSCKeyPermitCodeExecution = "eval.lmeval.permitCodeExecution"
)

// The images' RELATED_IMAGE_ variables, as OLM sets them (upstream's names).
const (
	EnvPodImage    = "RELATED_IMAGE_ODH_TA_LMES_JOB_IMAGE"
	EnvDriverImage = "RELATED_IMAGE_ODH_TA_LMES_DRIVER_IMAGE"
)

// The defaults are those of upstream's shipped settings (config/base
// params.env), but for the two permits, which default to upstream's code
// default and its RHOAI overlay, false: a job that asks for online access or
// remote code runs without them, with a condition naming the field, until the
// administrator permits them. The driver image is this operator's, whose
// /bin/driver is cmd/lmes-driver.
const (
	DefaultPodImage            = "quay.io/opendatahub/ta-lmes-job:odh-3.4-final"
	DefaultPodCheckingInterval = 10 * time.Second
	DefaultImagePullPolicy     = corev1.PullAlways
	DefaultMaxBatchSize        = 24
	DefaultDefaultBatchSize    = "8"
	DefaultDriverPort          = 18080
)

// Settings are the operator-wide settings in force for LMEvalJobs.
type Settings struct {
	PodImage, DriverImage string
	// PodCheckingInterval is how often a running job's progress reaches
	// its status: the driver's report interval (upstream's operator polled
	// the driver through exec that often; here the pod is watched).
	PodCheckingInterval time.Duration
	ImagePullPolicy     corev1.PullPolicy
	MaxBatchSize        int
	// DefaultBatchSize is the batch size of a job that sets none.
	DefaultBatchSize string
	// DetectDevice passes --detect-device to the driver (a GPU is used when
	// the pod has one).
	DetectDevice bool
	// AllowOnline and AllowCodeExecution are the administrator's permits;
	// a job's own allowOnline and allowCodeExecution take effect only where
	// they are true. PermitsFrom names the setting that decided them.
	AllowOnline, AllowCodeExecution bool
	PermitsFrom                     string
	DriverPort                      int
}

// ParseSettings reads the settings from the environment (os.Environ form),
// this operator's settings ConfigMap (data), upstream's ConfigMap
// (upstream) and Open Data Hub's (dsc), each nil when it does not exist.
// driverImage is the default driver image (this operator's own image). A
// bad value in data is an error naming its key; a bad value in upstream's
// ConfigMap is skipped for the default, as upstream skips it.
func ParseSettings(environ []string, data, upstream, dsc map[string]string, driverImage string) (Settings, error) {
	s := Settings{
		PodImage:            settings.Image(data, KeyPodImage, environ, EnvPodImage, orDefault(upstream[KeyPodImage], DefaultPodImage)),
		DriverImage:         settings.Image(data, KeyDriverImage, environ, EnvDriverImage, orDefault(upstream[KeyDriverImage], driverImage)),
		PodCheckingInterval: DefaultPodCheckingInterval,
		ImagePullPolicy:     DefaultImagePullPolicy,
		MaxBatchSize:        DefaultMaxBatchSize,
		DefaultBatchSize:    DefaultDefaultBatchSize,
		DetectDevice:        true,
		PermitsFrom:         "the operator's default (keys " + KeyAllowOnline + " and " + KeyAllowCodeExecution + " unset)",
		DriverPort:          DefaultDriverPort,
	}
	var err error
	if s.PodCheckingInterval, err = read(data, upstream, KeyPodCheckingInterval, s.PodCheckingInterval, parseInterval); err != nil {
		return s, err
	}
	if s.ImagePullPolicy, err = read(data, upstream, KeyImagePullPolicy, s.ImagePullPolicy, parsePullPolicy); err != nil {
		return s, err
	}
	if s.MaxBatchSize, err = read(data, upstream, KeyMaxBatchSize, s.MaxBatchSize, parsePositive); err != nil {
		return s, err
	}
	if s.DetectDevice, err = read(data, upstream, KeyDetectDevice, s.DetectDevice, parseBool); err != nil {
		return s, err
	}
	if s.DriverPort, err = read(data, upstream, KeyDriverPort, s.DriverPort, parsePort); err != nil {
		return s, err
	}
	parseBatch := func(v string) (string, error) { return v, CheckBatchSize(v, s.MaxBatchSize) }
	if s.DefaultBatchSize, err = read(data, upstream, KeyDefaultBatchSize, s.DefaultBatchSize, parseBatch); err != nil {
		return s, err
	}
	online, code := s.AllowOnline, s.AllowCodeExecution
	if online, err = read(data, upstream, KeyAllowOnline, online, parseBool); err != nil {
		return s, err
	}
	if code, err = read(data, upstream, KeyAllowCodeExecution, code, parseBool); err != nil {
		return s, err
	}
	s.AllowOnline, s.AllowCodeExecution = online, code
	switch {
	case dsc != nil:
		// Open Data Hub's choice wins; a key it lacks or cannot read denies.
		s.AllowOnline, _ = strconv.ParseBool(strings.TrimSpace(dsc[DSCKeyPermitOnline]))
		s.AllowCodeExecution, _ = strconv.ParseBool(strings.TrimSpace(dsc[DSCKeyPermitCodeExecution]))
		s.PermitsFrom = "the DataScienceCluster's eval.lmeval settings (ConfigMap " + DSCConfigMap + ")"
	case has(data, KeyAllowOnline) || has(data, KeyAllowCodeExecution):
		s.PermitsFrom = "the operator settings (keys " + KeyAllowOnline + " and " + KeyAllowCodeExecution + ")"
	case has(upstream, KeyAllowOnline) || has(upstream, KeyAllowCodeExecution):
		s.PermitsFrom = "upstream's settings (ConfigMap trustyai-service-operator-config)"
	}
	return s, nil
}

func has(m map[string]string, key string) bool { return strings.TrimSpace(m[key]) != "" }

func orDefault(v, def string) string {
	if v = strings.TrimSpace(v); v != "" {
		return v
	}
	return def
}

// read returns the value of key: data's (an error names the key when it is
// bad), else upstream's when it parses, else def.
func read[T any](data, upstream map[string]string, key string, def T, parse func(string) (T, error)) (T, error) {
	if v := strings.TrimSpace(data[key]); v != "" {
		out, err := parse(v)
		if err != nil {
			return def, settings.Invalid(key, "%v", err)
		}
		return out, nil
	}
	if v := strings.TrimSpace(upstream[key]); v != "" {
		if out, err := parse(v); err == nil {
			return out, nil
		}
	}
	return def, nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("must be true or false, got %q", v)
	}
	return b, nil
}

func parseInterval(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("must be a duration of 1s or more such as 10s, got %q", v)
	}
	return d, nil
}

func parsePullPolicy(v string) (corev1.PullPolicy, error) {
	switch p := corev1.PullPolicy(v); p {
	case corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent:
		return p, nil
	}
	return "", fmt.Errorf("must be Always, Never or IfNotPresent, got %q", v)
}

func parsePositive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("must be a whole number, 1 or more, got %q", v)
	}
	return n, nil
}

func parsePort(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("must be a port number from 1 to 65535, got %q", v)
	}
	return n, nil
}
