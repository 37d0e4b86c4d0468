package lmeval

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
)

// The names of a job's containers and volumes, as upstream's pod has them.
const (
	ContainerDriver = "driver"
	ContainerMain   = "main"
	volumeShared    = "shared"
	volumeOutputs   = "outputs"
	volumeOffline   = "offline"
	volumeS3Certs   = "certificates-s3"
	volumeDocker    = "docker-config"
	volumeCABundle  = "odh-ca-bundle"
	// VolumeDriverToken is the driver's ServiceAccount token, CA and
	// namespace, as the kubelet would mount them, in the main container
	// only: the pod does not mount its token automatically, so that the
	// author's sidecars get it only by mounting this volume themselves.
	VolumeDriverToken = "lmes-driver-token"
	// ServiceAccountPath is where client libraries look for the token.
	ServiceAccountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// HFHomePath is where an offline PVC is mounted (the image's HF_HOME).
	HFHomePath = "/opt/app-root/src/hf_home"
	// LabelName and NameValue are the label upstream puts on job pods.
	LabelName = "app.kubernetes.io/name"
	NameValue = "ta-lmes"
	// LabelJob names the job of a pod (as naming.NameLabel of its name).
	LabelJob = "ai-stack-operator.io/lmevaljob"
	// AnnotationGeneration records the spec generation a pod was made for
	// (upstream's annotation on the job; here on the pod, so that the
	// operator never writes the user's object).
	AnnotationGeneration = "trustyai.opendatahub.io/last-scheduled-generation"
	// The driver's environment naming its job.
	EnvJobNamespace = "LMES_JOB_NAMESPACE"
	EnvJobName      = "LMES_JOB_NAME"
)

// ProtectedEnv are the variables a job's spec.pod.container.env may not set:
// the operator decides them from the permits (upstream's list) and the
// driver's job reference.
var ProtectedEnv = []string{
	"TRUST_REMOTE_CODE", "HF_DATASETS_TRUST_REMOTE_CODE", "HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE",
	"TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE", "UNITXT_ALLOW_UNVERIFIED_CODE", "HF_ALLOW_CODE_EVAL",
	EnvJobNamespace, EnvJobName,
}

// Names are the names of a job's objects.
type Names struct {
	Pod, ManagedPVC, ServiceAccount string
}

// NamesOf returns the names of the job's objects: the pod is named as the
// job and the managed PVC <job>-pvc (upstream's names); the driver's
// ServiceAccount, Role and RoleBinding <job>-lmes-driver (within 63).
func NamesOf(name string) Names {
	return Names{Pod: name, ManagedPVC: name + "-pvc", ServiceAccount: naming.ChildName(name, "-lmes-driver")}
}

// PodLabels are upstream's label, the job's labels over it (Kueue's
// queue-name among them), and this operator's.
func PodLabels(job *lmv1alpha1.LMEvalJob, managed map[string]string) map[string]string {
	out := map[string]string{LabelName: NameValue}
	maps.Copy(out, job.Labels)
	maps.Copy(out, managed)
	out[LabelJob] = naming.NameLabel(job.Name)
	return out
}

// PodAnnotations are the job's annotations (as upstream copies them) but
// kubectl's and Argo CD's bookkeeping, and the generation the pod is for.
func PodAnnotations(job *lmv1alpha1.LMEvalJob) map[string]string {
	out := map[string]string{}
	for k, v := range job.Annotations {
		if k == corev1.LastAppliedConfigAnnotation || strings.HasPrefix(k, "argocd.argoproj.io/") {
			continue
		}
		out[k] = v
	}
	out[AnnotationGeneration] = strconv.FormatInt(job.Generation, 10)
	return out
}

func boolPtr(b bool) *bool { return &b }

// defaultContainerSecurity is upstream's for both containers.
func defaultContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: boolPtr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

// PodSpec is the job's pod spec, as upstream lays it out: the driver's
// init container copying itself to the shared volume, the main container
// running it with lm-eval, and the volumes of the outputs, the offline
// storage and the OCI credentials. Differences from upstream: the pod runs
// as the driver's ServiceAccount (which may patch only the job's status),
// the driver's environment names the job, and no driver port is declared
// (the driver serves nothing off loopback).
//
// withCA mounts the job's merged CA bundle (CABundleName) for https model
// endpoints, as upstream does.
func PodSpec(job *lmv1alpha1.LMEvalJob, s Settings, p Permits, withCA bool) corev1.PodSpec {
	spec := &job.Spec
	names := NamesOf(job.Name)
	var env []corev1.EnvVar
	var user lmv1alpha1.LMEvalContainer
	if spec.Pod != nil && spec.Pod.Container != nil {
		user = *spec.Pod.Container
	}
	for _, e := range user.Env {
		if !slices.Contains(ProtectedEnv, e.Name) {
			env = append(env, e)
		}
	}
	add := func(kv ...string) {
		for i := 0; i+1 < len(kv); i += 2 {
			env = append(env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
	}
	add("HF_HUB_DISABLE_TELEMETRY", "1", "DO_NOT_TRACK", "1")
	if p.CodeExecution {
		add("TRUST_REMOTE_CODE", "1", "HF_DATASETS_TRUST_REMOTE_CODE", "1", "UNITXT_ALLOW_UNVERIFIED_CODE", "True", "HF_ALLOW_CODE_EVAL", "1")
	} else {
		add("TRUST_REMOTE_CODE", "0", "HF_DATASETS_TRUST_REMOTE_CODE", "0", "UNITXT_ALLOW_UNVERIFIED_CODE", "False", "HF_ALLOW_CODE_EVAL", "0")
	}
	if !p.Online {
		add("HF_DATASETS_OFFLINE", "1", "HF_HUB_OFFLINE", "1", "TRANSFORMERS_OFFLINE", "1", "HF_EVALUATE_OFFLINE", "1", "UNITXT_USE_ONLY_LOCAL_CATALOGS", "True")
	}
	mounts := []corev1.VolumeMount{{Name: volumeShared, MountPath: "/opt/app-root/src/bin"}}
	volumes := []corev1.Volume{{Name: volumeShared, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if o := spec.Outputs; o != nil && (o.PersistentVolumeClaimManaged != nil || o.PersistentVolumeClaimName != nil) {
		claim := names.ManagedPVC
		if o.PersistentVolumeClaimManaged == nil {
			claim = *o.PersistentVolumeClaimName
		}
		mounts = append(mounts, corev1.VolumeMount{Name: volumeOutputs, MountPath: OutputPath})
		volumes = append(volumes, corev1.Volume{Name: volumeOutputs, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
	if off := spec.Offline; off != nil {
		if pvc := off.StorageSpec.PersistentVolumeClaimName; pvc != nil {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeOffline, MountPath: HFHomePath})
			volumes = append(volumes, corev1.Volume{Name: volumeOffline, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: *pvc}}})
		}
		if s3 := off.StorageSpec.S3Spec; s3 != nil {
			secret := func(name string, sel corev1.SecretKeySelector) {
				env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: sel.LocalObjectReference, Key: sel.Key}}})
			}
			secret("AWS_ACCESS_KEY_ID", s3.AccessKeyIdRef)
			secret("AWS_SECRET_ACCESS_KEY", s3.SecretAccessKeyRef)
			secret("AWS_DEFAULT_REGION", s3.Region)
			secret("AWS_S3_BUCKET", s3.Bucket)
			secret("AWS_S3_ENDPOINT", s3.Endpoint)
			add("AWS_PATH", s3.Path, "S3_VERIFY_SSL", verify(s3.VerifySSL))
			if s3.CABundle != nil {
				add("AWS_CA_BUNDLE", "/etc/certificates/s3/"+s3.CABundle.Key)
				mounts = append(mounts, corev1.VolumeMount{Name: volumeS3Certs, MountPath: "/etc/certificates/s3"})
				// Upstream mounts the selector's name as a ConfigMap.
				volumes = append(volumes, corev1.Volume{Name: volumeS3Certs, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: s3.CABundle.LocalObjectReference}}})
			}
		}
	}
	if spec.Outputs != nil && spec.Outputs.OCISpec != nil {
		oci := spec.Outputs.OCISpec
		env = append(env, corev1.EnvVar{Name: "OCI_REGISTRY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: oci.Registry.LocalObjectReference, Key: oci.Registry.Key}}})
		tag := oci.Tag
		if tag == "" {
			tag = job.Name
		}
		add("OCI_REPOSITORY", oci.Repository, "OCI_TAG", tag)
		if oci.Subject != "" {
			add("OCI_SUBJECT", oci.Subject)
		}
		if oci.UsernameRef != nil && oci.PasswordRef != nil {
			env = append(env,
				corev1.EnvVar{Name: "OCI_USERNAME", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: oci.UsernameRef.DeepCopy()}},
				corev1.EnvVar{Name: "OCI_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: oci.PasswordRef.DeepCopy()}})
		} else if oci.DockerConfigJsonRef != nil {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeDocker, MountPath: "/tmp/.docker/config.json", SubPath: "config.json", ReadOnly: true})
			volumes = append(volumes, corev1.Volume{Name: volumeDocker, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: oci.DockerConfigJsonRef.Name, Items: []corev1.KeyToPath{{Key: oci.DockerConfigJsonRef.Key, Path: "config.json"}}}}})
		}
		add("OCI_VERIFY_SSL", verify(oci.VerifySSL))
	}
	mounts = append(mounts, user.VolumeMounts...)
	if withCA {
		add("REQUESTS_CA_BUNDLE", CABundleMountPath)
		mounts = append(mounts, corev1.VolumeMount{Name: volumeCABundle, MountPath: CABundleMountPath, SubPath: CABundleKey, ReadOnly: true})
	}
	add(EnvJobNamespace, job.Namespace, EnvJobName, job.Name)
	mounts = append(mounts, corev1.VolumeMount{Name: VolumeDriverToken, MountPath: ServiceAccountPath, ReadOnly: true})
	var sidecars []corev1.Container
	var affinity *corev1.Affinity
	podSecurity := &corev1.PodSecurityContext{RunAsNonRoot: boolPtr(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if spec.Pod != nil {
		volumes = append(volumes, spec.Pod.Volumes...)
	}
	if withCA {
		volumes = append(volumes, corev1.Volume{Name: volumeCABundle, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: CABundleName(job.Name)}}}})
	}
	volumes = append(volumes, driverTokenVolume())
	if spec.Pod != nil {
		sidecars = spec.Pod.SideCars
		affinity = spec.Pod.Affinity
		if spec.Pod.SecurityContext != nil {
			podSecurity = spec.Pod.SecurityContext
		}
	}
	mainSecurity := defaultContainerSecurity()
	if user.SecurityContext != nil {
		mainSecurity = user.SecurityContext
	}
	var resources corev1.ResourceRequirements
	if user.Resources != nil {
		resources = *user.Resources
	}
	containers := append([]corev1.Container{{
		Name: ContainerMain, Image: s.PodImage, ImagePullPolicy: s.ImagePullPolicy,
		Command: Command(spec, s, p), Args: Args(spec, s, p),
		Env: env, VolumeMounts: mounts, Resources: resources, SecurityContext: mainSecurity,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}}, sidecars...)
	return corev1.PodSpec{
		ServiceAccountName: names.ServiceAccount,
		// The token goes to the main container only (VolumeDriverToken).
		AutomountServiceAccountToken: boolPtr(false),
		RestartPolicy:                corev1.RestartPolicyNever,
		SecurityContext:              podSecurity,
		Affinity:                     affinity,
		InitContainers: []corev1.Container{{
			Name: ContainerDriver, Image: s.DriverImage, ImagePullPolicy: s.ImagePullPolicy,
			Command:         []string{DriverPath, "--copy", DestDriverPath},
			SecurityContext: defaultContainerSecurity(),
			VolumeMounts:    []corev1.VolumeMount{{Name: volumeShared, MountPath: "/opt/app-root/src/bin"}},
		}},
		Containers: containers,
		Volumes:    volumes,
	}
}

// driverTokenVolume is what the kubelet mounts for a pod's ServiceAccount
// (a bound token of an hour, the cluster's root CA, the namespace), as a
// volume of the pod's own.
func driverTokenVolume() corev1.Volume {
	mode, expiry := int32(0o644), int64(3607)
	return corev1.Volume{Name: VolumeDriverToken, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

func verify(b *bool) string {
	if b == nil {
		return "true"
	}
	return strconv.FormatBool(*b)
}

// ManagedPVCSize is the size of the managed outputs PVC, or "" and an error
// message naming the field when it is not a quantity (upstream panics).
func ManagedPVCSize(spec *lmv1alpha1.LMEvalJobSpec) (string, string) {
	o := spec.Outputs
	if o == nil || o.PersistentVolumeClaimManaged == nil {
		return "", ""
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(o.PersistentVolumeClaimManaged.Size))
	if err != nil || q.Sign() <= 0 {
		return "", "spec.outputs.pvcManaged.size must be a storage size such as 1Gi, got " + strconv.Quote(o.PersistentVolumeClaimManaged.Size)
	}
	return q.String(), ""
}
