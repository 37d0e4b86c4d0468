package lmeval

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

func TestSettingsDefaults(t *testing.T) {
	s, err := ParseSettings(nil, nil, nil, nil, "quay.io/x/driver:v1")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{PodImage: DefaultPodImage, DriverImage: "quay.io/x/driver:v1", PodCheckingInterval: 10 * time.Second,
		ImagePullPolicy: corev1.PullAlways, MaxBatchSize: 24, DefaultBatchSize: "8", DetectDevice: true,
		PermitsFrom: s.PermitsFrom, DriverPort: 18080}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
}

func TestSettingsPrecedence(t *testing.T) {
	env := []string{EnvPodImage + "=env/pod:1", EnvDriverImage + "=env/driver:1"}
	up := map[string]string{KeyPodImage: "up/pod:1", KeyDriverImage: "up/driver:1", KeyMaxBatchSize: "12", KeyImagePullPolicy: "Never",
		KeyAllowOnline: "false", KeyAllowCodeExecution: "maybe", KeyDefaultBatchSize: "nonsense", KeyPodCheckingInterval: "1m"}
	s, err := ParseSettings(env, nil, up, nil, "own")
	if err != nil {
		t.Fatal(err)
	}
	if s.PodImage != "env/pod:1" || s.DriverImage != "env/driver:1" {
		t.Fatalf("RELATED_IMAGE_ beats upstream's key: %+v", s)
	}
	if s.MaxBatchSize != 12 || s.ImagePullPolicy != corev1.PullNever || s.PodCheckingInterval != time.Minute {
		t.Fatalf("upstream's keys apply: %+v", s)
	}
	if s.DefaultBatchSize != "8" {
		t.Fatalf("a bad upstream value falls back to the default: %q", s.DefaultBatchSize)
	}
	if s.AllowOnline || s.AllowCodeExecution || !strings.Contains(s.PermitsFrom, "trustyai-service-operator-config") {
		t.Fatalf("upstream's permits: %+v", s)
	}
	s, err = ParseSettings(nil, nil, up, nil, "own")
	if err != nil || s.PodImage != "up/pod:1" || s.DriverImage != "up/driver:1" {
		t.Fatalf("upstream's images without env: %+v %v", s, err)
	}
	data := map[string]string{KeyPodImage: "ours/pod:1", KeyMaxBatchSize: "30", KeyAllowOnline: "true", KeyDefaultBatchSize: "auto:4"}
	s, err = ParseSettings(env, data, up, nil, "own")
	if err != nil {
		t.Fatal(err)
	}
	if s.PodImage != "ours/pod:1" || s.MaxBatchSize != 30 || !s.AllowOnline || s.DefaultBatchSize != "auto:4" || !strings.Contains(s.PermitsFrom, KeyAllowOnline) {
		t.Fatalf("our keys win: %+v", s)
	}
}

func TestDataScienceClusterDecidesBothPermits(t *testing.T) {
	data := map[string]string{KeyAllowOnline: "true", KeyAllowCodeExecution: "true"}
	for _, c := range []struct {
		dsc          map[string]string
		online, code bool
	}{
		{map[string]string{DSCKeyPermitOnline: "true", DSCKeyPermitCodeExecution: "false"}, true, false},
		{map[string]string{DSCKeyPermitCodeExecution: "true"}, false, true},
		{map[string]string{DSCKeyPermitOnline: "deny"}, false, false},
		{map[string]string{}, false, false},
	} {
		s, err := ParseSettings(nil, data, nil, c.dsc, "own")
		if err != nil {
			t.Fatal(err)
		}
		if s.AllowOnline != c.online || s.AllowCodeExecution != c.code || !strings.Contains(s.PermitsFrom, DSCConfigMap) {
			t.Errorf("dsc %v: online %v code %v from %q", c.dsc, s.AllowOnline, s.AllowCodeExecution, s.PermitsFrom)
		}
	}
}

func TestBadOwnKeysAreNamed(t *testing.T) {
	for key, v := range map[string]string{
		KeyPodCheckingInterval: "soon", KeyImagePullPolicy: "always", KeyMaxBatchSize: "0", KeyDefaultBatchSize: "99",
		KeyDetectDevice: "yes please", KeyAllowOnline: "maybe", KeyAllowCodeExecution: "2", KeyDriverPort: "70000",
	} {
		_, err := ParseSettings(nil, map[string]string{key: v}, nil, nil, "own")
		var f *status.Failure
		if !errors.As(err, &f) || f.Reason != status.ReasonInvalidOperatorSettings || !strings.Contains(f.Field, key) {
			t.Errorf("%s=%q: got %v", key, v, err)
		}
	}
}
