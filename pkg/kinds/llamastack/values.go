package llamastack

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/distributions"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack/runconfig"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Pod-template annotations with the SHA-256 of what the pods read, so that
// they restart exactly when it changes (and never for label-only edits or an
// operator restart).
const (
	// AnnotationUserConfigHash: the run configuration (userConfig's ConfigMap or the typed config).
	AnnotationUserConfigHash = "configmap.hash/user-config"
	// AnnotationCABundleHash: the merged CA bundle.
	AnnotationCABundleHash = "configmap.hash/ca-bundle"
)

// mountedTrust is what the translation needs to know of the CA bundle.
type mountedTrust struct {
	// ConfigMapName of the merged bundle to mount; "" mounts none.
	ConfigMapName string
	// Hash of the mounted bundle's content.
	Hash string
}

// trustSources says which automatic CA sources apply to a CR.
type trustSources struct {
	// ServiceCA and ClusterTrustedCA: OpenShift's injected ConfigMaps.
	ServiceCA, ClusterTrustedCA bool
	// PublicRoots are added to any bundle that is mounted.
	PublicRoots bool
}

// trustSourcesFor applies the CR's switches (default on) to the platform.
// It is decided once, in Gather (or OfflineInputs): the same answer chooses
// the sources merged and the ConfigMaps the chart renders for injection.
func trustSourcesFor(cr *llamav1alpha1.LlamaStackDistribution, p platform.Cluster) trustSources {
	on := func(b *bool) bool { return b == nil || *b }
	var tc llamav1alpha1.TLSConfig
	if cr.Spec.Server.TLSConfig != nil {
		tc = *cr.Spec.Server.TLSConfig
	}
	// Both injections exist on OpenShift only.
	openshift := p.OpenShift
	return trustSources{
		ServiceCA:        openshift && on(tc.ServiceCA),
		ClusterTrustedCA: openshift && on(tc.ClusterTrustedCA),
		PublicRoots:      on(tc.PublicRoots),
	}
}

// valuesInputs are what the translation needs besides the CR itself.
type valuesInputs struct {
	// Distributions maps distribution names to images (overrides applied).
	Distributions distributions.Table
	// CommonLabels are added to every rendered object.
	CommonLabels map[string]string
	// Platform of the cluster.
	Platform platform.Cluster
	// TrustSources that apply to the CR.
	TrustSources trustSources
	// NetworkPolicyDisabled turns the NetworkPolicy off (an operator setting).
	NetworkPolicyDisabled bool
	// AnyUID binds the servers to OpenShift's anyuid SCC (an operator setting).
	AnyUID bool
	// OperatorNamespace is allowed through the NetworkPolicy.
	OperatorNamespace string
	// ClaimedStorage is the size the existing PVC requests, nil when there is
	// none; a smaller spec size is not applied (claims cannot shrink).
	ClaimedStorage *resource.Quantity
	// UserConfigHash is the content hash of userConfig's ConfigMap.
	UserConfigHash string
	// Trust is the CA bundle to mount.
	Trust mountedTrust
	// ProgressDeadlineSeconds of the Deployment (an operator setting); 0 leaves the default.
	ProgressDeadlineSeconds int32
}

// chartValues are the values of the llama-stack-distribution chart
// (charts/llama-stack-distribution/values.yaml documents each one).
type chartValues struct {
	Name                          string                            `json:"name"`
	CommonLabels                  map[string]string                 `json:"commonLabels,omitempty"`
	Replicas                      int32                             `json:"replicas"`
	ProgressDeadlineSeconds       int32                             `json:"progressDeadlineSeconds,omitempty"`
	Image                         string                            `json:"image"`
	Container                     Container                         `json:"container"`
	Workers                       int32                             `json:"workers,omitempty"`
	ServiceAccount                ServiceAccount                    `json:"serviceAccount"`
	TerminationGracePeriodSeconds *int64                            `json:"terminationGracePeriodSeconds,omitempty"`
	ExtraVolumes                  []corev1.Volume                   `json:"extraVolumes,omitempty"`
	ExtraVolumeMounts             []corev1.VolumeMount              `json:"extraVolumeMounts,omitempty"`
	TopologySpreadConstraints     []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	PodDisruptionBudget           PodDisruptionBudget               `json:"podDisruptionBudget"`
	Autoscaling                   Autoscaling                       `json:"autoscaling"`
	Storage                       Storage                           `json:"storage"`
	UserConfig                    UserConfig                        `json:"userConfig"`
	RunConfig                     string                            `json:"runConfig,omitempty"`
	PodAnnotations                map[string]string                 `json:"podAnnotations,omitempty"`
	NetworkPolicy                 NetworkPolicy                     `json:"networkPolicy"`
	AnyUID                        AnyUID                            `json:"anyuid"`
	Expose                        Expose                            `json:"expose"`
	CapabilityValues              CapabilityValues                  `json:"capabilities"`
	Trust                         TrustValues                       `json:"trust"`
}

// TrustValues are the chart's trust values.
type TrustValues struct {
	ConfigMapName    string `json:"configMapName,omitempty"`
	ServiceCA        bool   `json:"serviceCA"`
	ClusterTrustedCA bool   `json:"clusterTrustedCA"`
}

// Container are the server container's values.
type Container struct {
	Name      string                       `json:"name"`
	Port      int32                        `json:"port"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	Env       []corev1.EnvVar              `json:"env,omitempty"`
	EnvFrom   []corev1.EnvFromSource       `json:"envFrom,omitempty"`
	Command   []string                     `json:"command,omitempty"`
	Args      []string                     `json:"args,omitempty"`
	// Serves is how the server answers its port (the probes follow it):
	// "http", "https" (typed config with a TLS pair) or "mtls" (with a CA
	// too: client certificates required, which no probe presents).
	Serves string `json:"serves,omitempty"`
}

// ServiceAccount says whether the chart creates the pods' ServiceAccount.
type ServiceAccount struct {
	Create bool   `json:"create"`
	Name   string `json:"name,omitempty"`
}

// PodDisruptionBudget values: at most one field is set.
type PodDisruptionBudget struct {
	MinAvailable   *intstr.IntOrString `json:"minAvailable,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Autoscaling values: empty renders no HPA.
type Autoscaling struct {
	MinReplicas                       *int32 `json:"minReplicas,omitempty"`
	MaxReplicas                       int32  `json:"maxReplicas,omitempty"`
	TargetCPUUtilizationPercentage    *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// Storage are the persistent storage values.
type Storage struct {
	Enabled   bool   `json:"enabled"`
	Size      string `json:"size,omitempty"`
	MountPath string `json:"mountPath"`
}

// UserConfig are the user run-config values.
type UserConfig struct {
	ConfigMapName string `json:"configMapName,omitempty"`
}

// NetworkPolicy values.
type NetworkPolicy struct {
	Enabled                     bool                `json:"enabled"`
	OperatorNamespace           string              `json:"operatorNamespace,omitempty"`
	AllowedNamespaces           []string            `json:"allowedNamespaces,omitempty"`
	AllowAllNamespaces          bool                `json:"allowAllNamespaces,omitempty"`
	AllowedNamespaceLabels      []string            `json:"allowedNamespaceLabels,omitempty"`
	AllowedNamespaceMatchLabels []map[string]string `json:"allowedNamespaceMatchLabels,omitempty"`
}

// AnyUID values: the anyuid SCC binding, on OpenShift only.
type AnyUID struct {
	Enabled bool `json:"enabled"`
}

// Expose values.
type Expose struct {
	Enabled bool `json:"enabled"`
}

// CapabilityValues pin the chart's capability detection to what the operator detected.
type CapabilityValues struct {
	Route          bool `json:"route"`
	ServiceMonitor bool `json:"serviceMonitor"`
	OpenShift      bool `json:"openshift"`
}

// translate translates a LlamaStackDistribution into chart values.
func translate(cr *llamav1alpha1.LlamaStackDistribution, in valuesInputs) (*chartValues, error) {
	if err := checkNames(cr); err != nil {
		return nil, err
	}
	spec := cr.Spec
	server := spec.Server
	cs := server.ContainerSpec
	v := &chartValues{
		Name:                    cr.Name,
		CommonLabels:            in.CommonLabels,
		Replicas:                spec.Replicas,
		ProgressDeadlineSeconds: in.ProgressDeadlineSeconds,
		Container: Container{
			Name: cs.Name, Port: cs.Port, Env: cs.Env, EnvFrom: cs.EnvFrom, Command: cs.Command, Args: cs.Args,
		},
		ServiceAccount:            ServiceAccount{Create: true},
		Storage:                   Storage{MountPath: llamav1alpha1.DefaultMountPath},
		TopologySpreadConstraints: server.TopologySpreadConstraints,
		CapabilityValues:          CapabilityValues{Route: in.Platform.Route, ServiceMonitor: in.Platform.ServiceMonitor, OpenShift: in.Platform.OpenShift},
	}
	if v.Container.Name == "" {
		v.Container.Name = llamav1alpha1.DefaultContainerName
	}
	if v.Container.Port == 0 {
		v.Container.Port = llamav1alpha1.DefaultServerPort
	}
	if s := serves(cr); s != servesHTTP {
		v.Container.Serves = s
	}

	image, err := distributionImage(server.Distribution, in.Distributions)
	if err != nil {
		return nil, err
	}
	v.Image = image

	v.Container.Resources = podspec.Resources(cs.Resources, server.Workers)
	if server.Workers != nil && *server.Workers > 0 {
		v.Workers = *server.Workers
	}
	if po := server.PodOverrides; po != nil {
		if po.ServiceAccountName != "" {
			v.ServiceAccount = ServiceAccount{Create: false, Name: po.ServiceAccountName}
		}
		v.TerminationGracePeriodSeconds = po.TerminationGracePeriodSeconds
		v.ExtraVolumes = po.Volumes
		v.ExtraVolumeMounts = po.VolumeMounts
		if err := checkMounts(po, v); err != nil {
			return nil, err
		}
	}
	if pdb := server.PodDisruptionBudget; pdb != nil {
		if pdb.MinAvailable != nil && pdb.MaxUnavailable != nil {
			return nil, status.Invalid("spec.server.podDisruptionBudget", "set at most one of minAvailable and maxUnavailable")
		}
		v.PodDisruptionBudget = PodDisruptionBudget{MinAvailable: pdb.MinAvailable, MaxUnavailable: pdb.MaxUnavailable}
	}
	if as := server.Autoscaling; as != nil {
		if as.MinReplicas != nil && *as.MinReplicas > as.MaxReplicas {
			return nil, status.Invalid("spec.server.autoscaling.minReplicas", "%d exceeds maxReplicas %d", *as.MinReplicas, as.MaxReplicas)
		}
		v.Autoscaling = Autoscaling(*as)
		v.Autoscaling.MinReplicas = podspec.HPAMinReplicas(spec.Replicas, as.MinReplicas, as.MaxReplicas)
	}

	if err := storage(v, server.Storage, in.ClaimedStorage); err != nil {
		return nil, err
	}
	if err := runConfiguration(v, cr, image); err != nil {
		return nil, err
	}
	network(v, spec.Network, in)

	v.Trust = TrustValues{ConfigMapName: in.Trust.ConfigMapName, ServiceCA: in.TrustSources.ServiceCA, ClusterTrustedCA: in.TrustSources.ClusterTrustedCA}
	if in.Trust.ConfigMapName != "" {
		annotate(v, AnnotationCABundleHash, in.Trust.Hash)
	}
	if server.UserConfig != nil && in.UserConfigHash != "" {
		annotate(v, AnnotationUserConfigHash, in.UserConfigHash)
	}
	return v, nil
}

func annotate(v *chartValues, key, value string) {
	if v.PodAnnotations == nil {
		v.PodAnnotations = map[string]string{}
	}
	v.PodAnnotations[key] = value
}

// checkMounts refuses extra volumes and mounts that collide with the operator's own.
func checkMounts(po *llamav1alpha1.PodOverrides, v *chartValues) error {
	reserved := map[string]bool{"lls-storage": true, "run-config": true, "ca-bundle": true}
	names := map[string]bool{}
	for i, vol := range po.Volumes {
		if reserved[vol.Name] {
			return status.Invalid(fmt.Sprintf("spec.server.podOverrides.volumes[%d].name", i), "%q is used by the operator; choose another name", vol.Name)
		}
		names[vol.Name] = true
	}
	for i, m := range po.VolumeMounts {
		if !names[m.Name] && !reserved[m.Name] {
			return status.Invalid(fmt.Sprintf("spec.server.podOverrides.volumeMounts[%d].name", i), "no volume %q in spec.server.podOverrides.volumes", m.Name)
		}
	}
	return nil
}

func storage(v *chartValues, st *llamav1alpha1.StorageSpec, claimed *resource.Quantity) error {
	if st == nil {
		return nil
	}
	v.Storage.Enabled = true
	size := resource.MustParse(llamav1alpha1.DefaultStorageSize)
	if st.Size != nil {
		if st.Size.Sign() <= 0 {
			return status.Invalid("spec.server.storage.size", "must be a positive quantity such as 10Gi, got %q", st.Size.String())
		}
		size = *st.Size
	}
	// A claim cannot shrink: keep the claimed size (the status says so).
	if claimed != nil && size.Cmp(*claimed) < 0 {
		size = *claimed
	}
	v.Storage.Size = size.String()
	if st.MountPath != "" {
		if !strings.HasPrefix(st.MountPath, "/") {
			return status.Invalid("spec.server.storage.mountPath", "must be an absolute path, got %q", st.MountPath)
		}
		v.Storage.MountPath = st.MountPath
	}
	return nil
}

func runConfiguration(v *chartValues, cr *llamav1alpha1.LlamaStackDistribution, image string) error {
	server := cr.Spec.Server
	if server.UserConfig != nil && server.Config != nil {
		return status.Invalid("spec.server.config", "set at most one of spec.server.userConfig and spec.server.config")
	}
	if uc := server.UserConfig; uc != nil {
		if uc.ConfigMapNamespace != "" && uc.ConfigMapNamespace != cr.Namespace {
			return status.Invalid("spec.server.userConfig.configMapNamespace", "a pod can only mount a ConfigMap of its own namespace; copy ConfigMap %q into namespace %q and clear this field", uc.ConfigMapName, cr.Namespace)
		}
		v.UserConfig.ConfigMapName = uc.ConfigMapName
	}
	if server.Config != nil {
		name := server.Distribution.Name
		if name == "" {
			name = image
		}
		out, err := runconfig.Render(server.Config, runconfig.Options{ImageName: name, Image: image, Port: v.Container.Port})
		var f *status.Failure
		if errors.As(err, &f) {
			return f
		}
		if err != nil {
			return status.Invalid("spec.server.config", "%s", err.Error())
		}
		v.RunConfig = string(out)
		sum := sha256.Sum256(out)
		annotate(v, AnnotationUserConfigHash, hex.EncodeToString(sum[:]))
	}
	return nil
}

func network(v *chartValues, n *llamav1alpha1.NetworkSpec, in valuesInputs) {
	v.NetworkPolicy = NetworkPolicy{Enabled: !in.NetworkPolicyDisabled, OperatorNamespace: in.OperatorNamespace}
	v.AnyUID = AnyUID{Enabled: in.AnyUID && in.Platform.OpenShift}
	if n == nil {
		return
	}
	v.Expose.Enabled = n.ExposeRoute
	// Entries that can match no namespace are left out (the status says so).
	src := allowedFromSources(n.AllowedFrom)
	v.NetworkPolicy.AllowAllNamespaces = src.AllowAll
	v.NetworkPolicy.AllowedNamespaces = src.Namespaces
	v.NetworkPolicy.AllowedNamespaceLabels = src.LabelKeys
	v.NetworkPolicy.AllowedNamespaceMatchLabels = src.MatchLabels
}

func distributionImage(d llamav1alpha1.DistributionType, table distributions.Table) (string, error) {
	switch {
	case d.Name != "" && d.Image != "":
		return "", status.Invalid("spec.server.distribution", "set exactly one of name or image, not both")
	case d.Image != "":
		return d.Image, nil
	case d.Name != "":
		img, err := table.Image(d.Name)
		if err != nil {
			return "", status.Invalid("spec.server.distribution.name", "%v; or set spec.server.distribution.image instead", err)
		}
		return img, nil
	default:
		return "", status.Invalid("spec.server.distribution", "set exactly one of name (a distribution name such as starter) or image")
	}
}

// How a server answers its port.
const (
	servesHTTP  = "http"
	servesHTTPS = "https"
	servesMTLS  = "mtls"
)

// serves is how the CR's server answers its port: https when its typed
// configuration names a TLS pair, mtls when it names a client CA too, http
// otherwise (a userConfig's content is the user's: http is assumed).
func serves(cr *llamav1alpha1.LlamaStackDistribution) string {
	c := cr.Spec.Server.Config
	if c == nil || c.Server == nil || c.Server.TLSCertFile == "" || c.Server.TLSKeyFile == "" {
		return servesHTTP
	}
	if c.Server.TLSCAFile != "" {
		return servesMTLS
	}
	return servesHTTPS
}
