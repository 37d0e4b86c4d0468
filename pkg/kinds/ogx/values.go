package ogx

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/podspec"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Pod-template annotations with the hash of what the pods read, so that
// they restart exactly when it changes: upstream's keys.
const (
	// AnnotationUserConfigHash: the server configuration (overrideConfig's
	// ConfigMap or the generated one).
	AnnotationUserConfigHash = "configmap.hash/user-config"
	// AnnotationCABundleHash: the merged CA bundle.
	AnnotationCABundleHash = "configmap.hash/ca-bundle"
	// AnnotationIdentityHash: the client certificate's ConfigMap (its key is
	// a Secret's, which the operator does not read).
	AnnotationIdentityHash = "configmap.hash/identity"
)

// entrypoint is the OGX images' entrypoint (ogx-ai/ogx containers/Containerfile),
// which a prelude execs when the user gives no command.
const entrypoint = "/usr/local/bin/ogx-entrypoint.sh"

// Where the chart mounts the server's TLS pair (network.tls.secretName).
const (
	serverCertFile = "/etc/ogx-tls/server/tls.crt"
	serverKeyFile  = "/etc/ogx-tls/server/tls.key"
)

// trustSources says which automatic CA sources apply (OpenShift's
// injected ConfigMaps), decided once in Gather or OfflineInputs.
type trustSources struct {
	ServiceCA, ClusterTrustedCA bool
}

// mountedTrust is what the translation needs to know of the CA bundle.
type mountedTrust struct {
	// ConfigMapName of the merged bundle to mount; "" mounts none.
	ConfigMapName string
	// Hash of its content.
	Hash string
}

// generated is a generated server configuration (config.go).
type generated struct {
	Config        []byte
	Env           []corev1.EnvVar
	ConfigMapName string
	Providers     int
	Resources     int
	Version       int
	// Prelude runs before the server in its shell (configgen.Output.Prelude).
	Prelude string
	// BaseSource says where the base came from: "configmap", "distribution".
	BaseSource string
	BaseHash   string
}

// valuesInputs are what the translation needs besides the CR.
type valuesInputs struct {
	Distributions           map[string]string
	CommonLabels            map[string]string
	Platform                platform.Cluster
	TrustSources            trustSources
	AnyUID                  bool
	OperatorNamespace       string
	ProgressDeadlineSeconds int32
	// ClaimedStorage is the size the existing PVC requests (claims cannot shrink).
	ClaimedStorage *resource.Quantity
	// OverrideHash is the content hash of overrideConfig's key; OverrideServesTLS
	// is true when that configuration names a TLS pair for the server.
	OverrideHash      string
	OverrideServesTLS bool
	// IdentityHash is the content hash of tls.identity.cert's ConfigMap key.
	IdentityHash string
	// Generated is the generated configuration; nil when not in generated mode.
	Generated *generated
	Trust     mountedTrust
	// Adoption is what the adoption annotations give the chart.
	Adoption adoptionValues
}

// adoptionValues are the adopted claim (mounted instead of <name>-pvc), the
// wait for the old server (zero replicas, no HPA) and the old Service name.
type adoptionValues struct {
	Claim        string
	Waiting      bool
	ServiceAlias string
}

// chartValues are the values of the ogx-server chart
// (charts/ogx-server/values.yaml documents each one).
type chartValues struct {
	Name                           string                            `json:"name"`
	CommonLabels                   map[string]string                 `json:"commonLabels,omitempty"`
	Replicas                       int32                             `json:"replicas"`
	ProgressDeadlineSeconds        int32                             `json:"progressDeadlineSeconds,omitempty"`
	Image                          string                            `json:"image"`
	Container                      container                         `json:"container"`
	Workers                        int32                             `json:"workers"`
	RegistryRefreshIntervalSeconds int32                             `json:"registryRefreshIntervalSeconds,omitempty"`
	ServiceAccount                 serviceAccount                    `json:"serviceAccount"`
	ExtraVolumes                   []corev1.Volume                   `json:"extraVolumes,omitempty"`
	ExtraVolumeMounts              []corev1.VolumeMount              `json:"extraVolumeMounts,omitempty"`
	ResourceClaims                 []corev1.PodResourceClaim         `json:"resourceClaims,omitempty"`
	TopologySpreadConstraints      []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	PodDisruptionBudget            podDisruptionBudget               `json:"podDisruptionBudget"`
	Autoscaling                    autoscaling                       `json:"autoscaling"`
	Storage                        storageValues                     `json:"storage"`
	Config                         configValues                      `json:"config"`
	SecretEnv                      []corev1.EnvVar                   `json:"secretEnv,omitempty"`
	Monitoring                     monitoring                        `json:"monitoring"`
	Trust                          trustValues                       `json:"trust"`
	TLS                            tlsValues                         `json:"tls"`
	Identity                       identityValues                    `json:"identity"`
	PodAnnotations                 map[string]string                 `json:"podAnnotations,omitempty"`
	NetworkPolicy                  networkPolicy                     `json:"networkPolicy"`
	Expose                         expose                            `json:"expose"`
	Capabilities                   capabilities                      `json:"capabilities"`
	ServiceAliases                 []string                          `json:"serviceAliases,omitempty"`
	AnyUID                         anyUID                            `json:"anyuid"`
}

type container struct {
	Port      int32                        `json:"port"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	Env       []corev1.EnvVar              `json:"env,omitempty"`
	Command   []string                     `json:"command,omitempty"`
	Args      []string                     `json:"args,omitempty"`
	Serves    string                       `json:"serves,omitempty"`
}

type serviceAccount struct {
	Name string `json:"name,omitempty"`
}

type podDisruptionBudget struct {
	MinAvailable   *intstr.IntOrString `json:"minAvailable,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

type autoscaling struct {
	MinReplicas                       *int32 `json:"minReplicas,omitempty"`
	MaxReplicas                       int32  `json:"maxReplicas,omitempty"`
	TargetCPUUtilizationPercentage    *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

type storageValues struct {
	Enabled   bool   `json:"enabled"`
	Size      string `json:"size,omitempty"`
	MountPath string `json:"mountPath"`
	ClaimName string `json:"claimName,omitempty"`
}

type configValues struct {
	ConfigMapName string `json:"configMapName,omitempty"`
	Key           string `json:"key,omitempty"`
	Generated     string `json:"generated,omitempty"`
	GeneratedName string `json:"generatedName,omitempty"`
}

type monitoring struct {
	Enabled     bool  `json:"enabled"`
	MetricsPort int32 `json:"metricsPort,omitempty"`
}

type trustValues struct {
	ConfigMapName    string `json:"configMapName,omitempty"`
	ServiceCA        bool   `json:"serviceCA"`
	ClusterTrustedCA bool   `json:"clusterTrustedCA"`
}

type tlsValues struct {
	SecretName string `json:"secretName,omitempty"`
}

type identityValues struct {
	CertConfigMap string `json:"certConfigMap,omitempty"`
	CertKey       string `json:"certKey,omitempty"`
	KeySecret     string `json:"keySecret,omitempty"`
	KeyKey        string `json:"keyKey,omitempty"`
}

type networkPolicy struct {
	Enabled           bool                                    `json:"enabled"`
	OperatorNamespace string                                  `json:"operatorNamespace,omitempty"`
	OpenshiftIngress  bool                                    `json:"openshiftIngress"`
	Ingress           []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress            []networkingv1.NetworkPolicyEgressRule  `json:"egress,omitempty"`
	PolicyTypes       []networkingv1.PolicyType               `json:"policyTypes,omitempty"`
}

type expose struct {
	Enabled bool   `json:"enabled"`
	Host    string `json:"host,omitempty"`
}

type capabilities struct {
	Route          bool `json:"route"`
	ServiceMonitor bool `json:"serviceMonitor"`
	PrometheusRule bool `json:"prometheusRule"`
	OpenShift      bool `json:"openshift"`
}

type anyUID struct {
	Enabled bool `json:"enabled"`
}

// reservedVolumes are the chart's own volume names.
var reservedVolumes = []string{"ogx-storage", "user-config", "ca-bundle", "server-tls", "client-identity"}

// translate translates an OGXServer into chart values.
func translate(cr *ogxv1beta1.OGXServer, in valuesInputs) (*chartValues, error) {
	spec := cr.Spec
	if err := checkNames(cr); err != nil {
		return nil, err
	}
	w := spec.Workload
	if w == nil {
		w = &ogxv1beta1.WorkloadSpec{}
	}
	v := &chartValues{
		Name:                      cr.Name,
		CommonLabels:              in.CommonLabels,
		Replicas:                  1,
		ProgressDeadlineSeconds:   in.ProgressDeadlineSeconds,
		Workers:                   1,
		Container:                 container{Port: ogxv1beta1.DefaultServerPort},
		Storage:                   storageValues{MountPath: ogxv1beta1.DefaultMountPath},
		Capabilities:              capabilities{Route: in.Platform.Route, ServiceMonitor: in.Platform.ServiceMonitor, PrometheusRule: in.Platform.PrometheusRule, OpenShift: in.Platform.OpenShift},
		AnyUID:                    anyUID{Enabled: in.AnyUID && in.Platform.OpenShift},
		Monitoring:                monitoring{Enabled: true, MetricsPort: ogxv1beta1.DefaultMetricsPort},
		TopologySpreadConstraints: w.TopologySpreadConstraints,
		ResourceClaims:            w.ResourceClaims,
	}
	image, err := imageOf(spec.Distribution.Name, spec.Distribution.Image, in.Distributions)
	if err != nil {
		return nil, status.Invalid("spec.distribution.name", "%v; or set spec.distribution.image instead", err)
	}
	v.Image = image
	if w.Replicas != nil {
		v.Replicas = *w.Replicas
	}
	if w.Workers != nil && *w.Workers > 0 {
		v.Workers = *w.Workers
	}
	var resources corev1.ResourceRequirements
	if w.Resources != nil {
		resources = *w.Resources
	}
	v.Container.Resources = podspec.Resources(resources, w.Workers)
	if o := w.Overrides; o != nil {
		v.ServiceAccount.Name = o.ServiceAccountName
		v.Container.Env, v.Container.Command, v.Container.Args = o.Env, o.Command, o.Args
		v.ExtraVolumes, v.ExtraVolumeMounts = o.Volumes, o.VolumeMounts
		if err := checkMounts(o); err != nil {
			return nil, err
		}
	}
	if pdb := w.PodDisruptionBudget; pdb != nil {
		v.PodDisruptionBudget = podDisruptionBudget{MinAvailable: pdb.MinAvailable, MaxUnavailable: pdb.MaxUnavailable}
	}
	if as := w.Autoscaling; as != nil {
		v.Autoscaling = autoscaling{MaxReplicas: as.MaxReplicas, TargetCPUUtilizationPercentage: as.TargetCPUUtilizationPercentage, TargetMemoryUtilizationPercentage: as.TargetMemoryUtilizationPercentage}
		v.Autoscaling.MinReplicas = podspec.HPAMinReplicas(v.Replicas, as.MinReplicas, as.MaxReplicas)
	}
	if err := storage(v, w.Storage, in.ClaimedStorage); err != nil {
		return nil, err
	}
	if a := in.Adoption; a.Claim != "" {
		v.Storage.Enabled, v.Storage.ClaimName = true, a.Claim
		if a.Waiting {
			// The old server still mounts the claim: wait for it.
			v.Replicas, v.Autoscaling = 0, autoscaling{}
		}
	}
	if in.Adoption.ServiceAlias != "" {
		v.ServiceAliases = []string{in.Adoption.ServiceAlias}
	}
	if spec.RegistryRefreshIntervalSeconds != nil {
		v.RegistryRefreshIntervalSeconds = *spec.RegistryRefreshIntervalSeconds
	}
	if m := spec.Monitoring; m != nil {
		if m.Enabled != nil && !*m.Enabled {
			v.Monitoring = monitoring{}
		} else if m.MetricsPort != nil {
			v.Monitoring.MetricsPort = *m.MetricsPort
		}
	}
	network(v, spec.Network, in)

	serves := "http"
	switch {
	case spec.OverrideConfig != nil:
		v.Config = configValues{ConfigMapName: spec.OverrideConfig.Name, Key: spec.OverrideConfig.Key}
		annotate(v, AnnotationUserConfigHash, in.OverrideHash)
		if in.OverrideServesTLS {
			serves = "https"
		}
	case in.Generated != nil:
		v.Config = configValues{Generated: string(in.Generated.Config), GeneratedName: in.Generated.ConfigMapName}
		v.SecretEnv = in.Generated.Env
		if p := in.Generated.Prelude; p != "" {
			// The prelude (the parts of a connection string) runs in the
			// shell that then execs the server: the user's command, or the
			// image's entrypoint.
			run := v.Container.Command
			if len(run) == 0 {
				run = []string{entrypoint}
			}
			v.Container.Args = append(append([]string{}, run...), v.Container.Args...)
			v.Container.Command = []string{"/bin/sh", "-c", p + "\nexec \"$@\"", "ogx"}
		}
		annotate(v, AnnotationUserConfigHash, in.Generated.ConfigMapName)
		if v.TLS.SecretName != "" {
			serves = "https"
		}
	}
	if v.TLS.SecretName != "" {
		v.Container.Serves = serves
	}
	if tc := spec.TLS; tc != nil && tc.Identity != nil {
		id := tc.Identity
		v.Identity = identityValues{CertConfigMap: id.Cert.Name, CertKey: id.Cert.Key, KeySecret: id.Key.Name, KeyKey: id.Key.Key}
		annotate(v, AnnotationIdentityHash, in.IdentityHash)
	}
	v.Trust = trustValues{ConfigMapName: in.Trust.ConfigMapName, ServiceCA: in.TrustSources.ServiceCA, ClusterTrustedCA: in.TrustSources.ClusterTrustedCA}
	if in.Trust.ConfigMapName != "" {
		annotate(v, AnnotationCABundleHash, in.Trust.Hash)
	}
	return v, nil
}

func annotate(v *chartValues, key, value string) {
	if value == "" {
		return
	}
	if v.PodAnnotations == nil {
		v.PodAnnotations = map[string]string{}
	}
	v.PodAnnotations[key] = value
}

// network fills the NetworkPolicy, TLS and exposure values.
func network(v *chartValues, n *ogxv1beta1.NetworkSpec, in valuesInputs) {
	v.NetworkPolicy = networkPolicy{Enabled: true, OperatorNamespace: in.OperatorNamespace}
	if n == nil {
		return
	}
	// As upstream: the OpenShift router's namespaces are admitted once the
	// CR has a network section.
	v.NetworkPolicy.OpenshiftIngress = true
	if n.Port != 0 {
		v.Container.Port = n.Port
	}
	if n.TLS != nil {
		v.TLS.SecretName = n.TLS.SecretName
	}
	if ea := n.ExternalAccess; ea != nil {
		v.Expose = expose{Enabled: ea.Enabled, Host: ea.Hostname}
	}
	if p := n.Policy; p != nil {
		if p.Enabled != nil && !*p.Enabled {
			v.NetworkPolicy.Enabled = false
		}
		v.NetworkPolicy.Ingress, v.NetworkPolicy.Egress, v.NetworkPolicy.PolicyTypes = p.Ingress, p.Egress, p.PolicyTypes
	}
}

func storage(v *chartValues, st *ogxv1beta1.PVCStorageSpec, claimed *resource.Quantity) error {
	if st == nil {
		return nil
	}
	v.Storage.Enabled = true
	size := ogxv1beta1.DefaultStorageSize.DeepCopy()
	if st.Size != nil {
		if st.Size.Sign() <= 0 {
			return status.Invalid("spec.workload.storage.size", "must be a positive quantity such as 10Gi, got %q", st.Size.String())
		}
		size = st.Size.DeepCopy()
	}
	// A claim cannot shrink: keep the claimed size (the status says so).
	if claimed != nil && size.Cmp(*claimed) < 0 {
		size = claimed.DeepCopy()
	}
	v.Storage.Size = size.String()
	if st.MountPath != "" {
		if !strings.HasPrefix(st.MountPath, "/") {
			return status.Invalid("spec.workload.storage.mountPath", "must be an absolute path, got %s", status.Quote(st.MountPath))
		}
		v.Storage.MountPath = st.MountPath
	}
	return nil
}

// checkMounts refuses volumes that collide with the chart's own and mounts
// of volumes that do not exist.
func checkMounts(o *ogxv1beta1.WorkloadOverrides) error {
	names := map[string]bool{}
	for i, vol := range o.Volumes {
		if slices.Contains(reservedVolumes, vol.Name) {
			return status.Invalid(fmt.Sprintf("spec.workload.overrides.volumes[%d].name", i), "%q is used by the operator; choose another name", vol.Name)
		}
		names[vol.Name] = true
	}
	for i, m := range o.VolumeMounts {
		if !names[m.Name] && !slices.Contains(reservedVolumes, m.Name) {
			return status.Invalid(fmt.Sprintf("spec.workload.overrides.volumeMounts[%d].name", i), "no volume %q in spec.workload.overrides.volumes", m.Name)
		}
	}
	return nil
}

// checkNames refuses names that Kubernetes would refuse in the objects they
// reach, so that the user reads which field to fix.
func checkNames(cr *ogxv1beta1.OGXServer) error {
	spec := cr.Spec
	check := status.CheckName
	var checks []error
	if img := spec.Distribution.Image; img != "" && strings.TrimSpace(img) != img {
		checks = append(checks, status.Invalid("spec.distribution.image", "%s has leading or trailing whitespace; remove it", status.Quote(img)))
	}
	if w := spec.Workload; w != nil && w.Overrides != nil && w.Overrides.ServiceAccountName != "" {
		checks = append(checks, check("spec.workload.overrides.serviceAccountName", w.Overrides.ServiceAccountName, validation.IsDNS1123Subdomain, "ServiceAccount name"))
	}
	refs := map[string]*ogxv1beta1.ConfigMapKeyRef{"spec.overrideConfig": spec.OverrideConfig, "spec.baseConfig": spec.BaseConfig}
	if tc := spec.TLS; tc != nil {
		if tc.Trust != nil {
			for i := range tc.Trust.CACertificates {
				refs[fmt.Sprintf("spec.tls.trust.caCertificates[%d]", i)] = &tc.Trust.CACertificates[i]
			}
		}
		if tc.Identity != nil {
			refs["spec.tls.identity.cert"] = &tc.Identity.Cert
			checks = append(checks, check("spec.tls.identity.key.name", tc.Identity.Key.Name, validation.IsDNS1123Subdomain, "Secret name"))
		}
	}
	for _, field := range slices.Sorted(maps.Keys(refs)) {
		if ref := refs[field]; ref != nil {
			checks = append(checks, check(field+".name", ref.Name, validation.IsDNS1123Subdomain, "ConfigMap name"))
			checks = append(checks, check(field+".key", ref.Key, validation.IsConfigMapKey, "ConfigMap key"))
		}
	}
	if n := spec.Network; n != nil && n.TLS != nil {
		checks = append(checks, check("spec.network.tls.secretName", n.TLS.SecretName, validation.IsDNS1123Subdomain, "Secret name"))
	}
	if w := spec.Workload; w != nil && w.PodDisruptionBudget != nil {
		checks = append(checks, status.IntOrPercent("spec.workload.podDisruptionBudget.minAvailable", w.PodDisruptionBudget.MinAvailable))
		checks = append(checks, status.IntOrPercent("spec.workload.podDisruptionBudget.maxUnavailable", w.PodDisruptionBudget.MaxUnavailable))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}
