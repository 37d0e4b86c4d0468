package lmeval

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

func envNames(c corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

func TestBaselinePodIsUpstreamsLayout(t *testing.T) {
	j := job("")
	s := defaults(t)
	spec := PodSpec(j, s, PermitsFor(&j.Spec, s), false)
	if spec.RestartPolicy != corev1.RestartPolicyNever || spec.ServiceAccountName != "eval-lmes-driver" || !*spec.SecurityContext.RunAsNonRoot {
		t.Fatalf("pod: %+v", spec)
	}
	init := spec.InitContainers[0]
	if init.Name != "driver" || init.Image != "driver:v1" || !slices.Equal(init.Command, []string{"/bin/driver", "--copy", "/opt/app-root/src/bin/driver"}) {
		t.Fatalf("init container: %+v", init)
	}
	main := spec.Containers[0]
	want := []string{"HF_HUB_DISABLE_TELEMETRY=1", "DO_NOT_TRACK=1",
		"TRUST_REMOTE_CODE=0", "HF_DATASETS_TRUST_REMOTE_CODE=0", "UNITXT_ALLOW_UNVERIFIED_CODE=False", "HF_ALLOW_CODE_EVAL=0",
		"HF_DATASETS_OFFLINE=1", "HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "HF_EVALUATE_OFFLINE=1", "UNITXT_USE_ONLY_LOCAL_CATALOGS=True",
		"LMES_JOB_NAMESPACE=team-a", "LMES_JOB_NAME=eval"}
	if got := envNames(main); !slices.Equal(got, want) {
		t.Fatalf("env\n got %q\nwant %q", got, want)
	}
	if main.Name != "main" || main.Image != DefaultPodImage || main.Command[0] != DestDriverPath || main.Args[0] != "python" || len(main.Ports) != 0 {
		t.Fatalf("main container: %+v", main)
	}
	if len(spec.Volumes) != 2 || spec.Volumes[0].EmptyDir == nil || main.VolumeMounts[0].MountPath != "/opt/app-root/src/bin" {
		t.Fatalf("volumes %+v mounts %+v", spec.Volumes, main.VolumeMounts)
	}
	// The driver's token: not mounted by the kubelet in every container,
	// but as a volume of the pod's own in the main container only.
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Fatalf("the pod mounts its token in every container: %v", spec.AutomountServiceAccountToken)
	}
	token := spec.Volumes[1]
	if token.Name != VolumeDriverToken || token.Projected == nil || len(token.Projected.Sources) != 3 || token.Projected.Sources[0].ServiceAccountToken == nil {
		t.Fatalf("token volume %+v", token)
	}
	if m := main.VolumeMounts[len(main.VolumeMounts)-1]; m.Name != VolumeDriverToken || m.MountPath != ServiceAccountPath || !m.ReadOnly {
		t.Fatalf("the main container's token mount %+v", m)
	}
}

// A job author's sidecars run in the job's pod, but without the driver's
// token (which may write the job's status): only a sidecar that mounts the
// token's volume itself gets it.
func TestSidecarsGetNoDriverToken(t *testing.T) {
	j := job("")
	j.Spec.Pod = &lmv1alpha1.LMEvalPodSpec{SideCars: []corev1.Container{
		{Name: "plain", Image: "x"},
		{Name: "asks", Image: "y", VolumeMounts: []corev1.VolumeMount{{Name: VolumeDriverToken, MountPath: ServiceAccountPath, ReadOnly: true}}},
	}}
	s := defaults(t)
	spec := PodSpec(j, s, PermitsFor(&j.Spec, s), false)
	if *spec.AutomountServiceAccountToken {
		t.Fatal("automount")
	}
	mounted := func(c corev1.Container) bool {
		for _, m := range c.VolumeMounts {
			if m.Name == VolumeDriverToken || m.MountPath == ServiceAccountPath {
				return true
			}
		}
		return false
	}
	if !mounted(spec.Containers[0]) || mounted(spec.Containers[1]) || !mounted(spec.Containers[2]) || mounted(spec.InitContainers[0]) {
		t.Fatalf("token mounts: main %v, plain sidecar %v, asking sidecar %v, init %v", mounted(spec.Containers[0]), mounted(spec.Containers[1]), mounted(spec.Containers[2]), mounted(spec.InitContainers[0]))
	}
}

func TestPodCarriesStorageCredentialsAndUserAdditions(t *testing.T) {
	yes, pvc, off := true, "results", "models"
	j := job("")
	j.Spec.AllowOnline, j.Spec.AllowCodeExecution = &yes, &yes
	j.Spec.Outputs = &lmv1alpha1.Outputs{PersistentVolumeClaimName: &pvc, PersistentVolumeClaimManaged: &lmv1alpha1.PersistentVolumeClaimManaged{Size: "5Gi"},
		OCISpec: &lmv1alpha1.OCISpec{Registry: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "oci"}, Key: "registry"}, Repository: "org/results",
			DockerConfigJsonRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pull"}, Key: ".dockerconfigjson"}}}
	j.Spec.Offline = &lmv1alpha1.OfflineSpec{StorageSpec: lmv1alpha1.OfflineStorageSpec{PersistentVolumeClaimName: &off}}
	j.Spec.Pod = &lmv1alpha1.LMEvalPodSpec{
		Container: &lmv1alpha1.LMEvalContainer{Env: []corev1.EnvVar{{Name: "HF_HUB_OFFLINE", Value: "0"}, {Name: "LMES_JOB_NAME", Value: "other"}, {Name: "MINE", Value: "x"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}}},
		Volumes:  []corev1.Volume{{Name: "extra"}},
		SideCars: []corev1.Container{{Name: "proxy", Image: "proxy"}},
	}
	s := defaults(t)
	s.AllowOnline, s.AllowCodeExecution = true, true
	spec := PodSpec(j, s, PermitsFor(&j.Spec, s), false)
	env := strings.Join(envNames(spec.Containers[0]), " ")
	for _, want := range []string{"MINE=x", "TRUST_REMOTE_CODE=1", "OCI_REPOSITORY=org/results", "OCI_TAG=eval", "OCI_VERIFY_SSL=true", "LMES_JOB_NAME=eval"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s: %s", want, env)
		}
	}
	for _, not := range []string{"HF_HUB_OFFLINE", "LMES_JOB_NAME=other"} {
		if strings.Contains(env, not) {
			t.Errorf("env has %s: %s", not, env)
		}
	}
	var vols []string
	for _, v := range spec.Volumes {
		vols = append(vols, v.Name)
	}
	if !slices.Equal(vols, []string{"shared", "outputs", "offline", "docker-config", "extra", "lmes-driver-token"}) {
		t.Fatalf("volumes %q", vols)
	}
	if spec.Volumes[1].PersistentVolumeClaim.ClaimName != "eval-pvc" {
		t.Fatalf("the managed PVC wins over pvcName, as upstream: %+v", spec.Volumes[1])
	}
	if len(spec.Containers) != 2 || spec.Containers[1].Name != "proxy" {
		t.Fatalf("sidecars: %+v", spec.Containers)
	}
}

func TestManagedPVCSize(t *testing.T) {
	j := job("")
	if s, msg := ManagedPVCSize(&j.Spec); s != "" || msg != "" {
		t.Fatal(s, msg)
	}
	j.Spec.Outputs = &lmv1alpha1.Outputs{PersistentVolumeClaimManaged: &lmv1alpha1.PersistentVolumeClaimManaged{Size: "5Gi"}}
	if s, msg := ManagedPVCSize(&j.Spec); s != "5Gi" || msg != "" {
		t.Fatal(s, msg)
	}
	for _, bad := range []string{"", "lots", "-1Gi", "0"} {
		j.Spec.Outputs.PersistentVolumeClaimManaged.Size = bad
		if _, msg := ManagedPVCSize(&j.Spec); !strings.HasPrefix(msg, "spec.outputs.pvcManaged.size must be a storage size") {
			t.Errorf("%q: %q", bad, msg)
		}
	}
}

func TestCABundleForHTTPSModels(t *testing.T) {
	j := job("")
	j.Spec.ModelArgs = []lmv1alpha1.Arg{{Name: "base_url", Value: "HTTPS://model.example/v1"}}
	if !NeedsCABundle(&j.Spec) {
		t.Fatal("an https base_url needs the bundle")
	}
	j.Spec.ModelArgs = append(j.Spec.ModelArgs, lmv1alpha1.Arg{Name: "verify_certificate", Value: "False"})
	if NeedsCABundle(&j.Spec) {
		t.Fatal("verify_certificate says otherwise")
	}
	j.Spec.ModelArgs = []lmv1alpha1.Arg{{Name: "base_url", Value: "http://model"}}
	if NeedsCABundle(&j.Spec) {
		t.Fatal("http needs none")
	}
	if got := MergeCABundle("A", " ", "", "B"); got != "A\nB" {
		t.Fatalf("merge %q", got)
	}
	s := defaults(t)
	spec := PodSpec(j, s, PermitsFor(&j.Spec, s), true)
	main := spec.Containers[0]
	env := envNames(main)
	if env[len(env)-3] != "REQUESTS_CA_BUNDLE=/etc/ssl/certs/odh-ca-bundle.crt" {
		t.Fatalf("env %q", env)
	}
	last := main.VolumeMounts[len(main.VolumeMounts)-2] // then the driver's token
	vol := spec.Volumes[len(spec.Volumes)-2]
	if last.Name != "odh-ca-bundle" || last.SubPath != "merged-ca-bundle.crt" || !last.ReadOnly || vol.ConfigMap == nil || vol.ConfigMap.Name != "eval-ca-bundle" {
		t.Fatalf("mount %+v volume %+v", last, vol)
	}
}
