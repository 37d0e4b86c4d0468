// Package convert turns LlamaStackDistributions (llamastack.io/v1alpha1)
// into OGXServers (ogx.io/v1beta1), field by field, for `render
// --to-ogxserver`: what has a counterpart is carried over, what has none is
// reported as a Note naming the field and what to do. The OGXServer gets a
// name of its own and upstream's adoption annotations, so that applying it
// beside the old CR takes over the old claim (data kept) and Service name.
package convert

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
)

// DefaultSuffix is added to the old CR's name: an OGXServer may not adopt
// from a CR of its own name (upstream refuses it, and the objects' names
// would collide while both exist).
const DefaultSuffix = "-ogx"

// Options of a conversion.
type Options struct {
	// Suffix is added to the name; DefaultSuffix when empty.
	Suffix string
	// NoAdopt leaves the adoption annotations out.
	NoAdopt bool
}

// Note is a field without an exact counterpart, and what was done or is to do.
type Note struct {
	Field, Message string
}

func (n Note) String() string { return n.Field + ": " + n.Message }

// distributions are the names the OGX table knows; the others are kept and
// noted (the OGXServer reports an unknown name until it is changed).
var distributions = []string{"meta-reference-gpu", "postgres-demo", "remote-vllm", "starter"}

// legacyMountPath is where the old kind mounted storage by default.
const legacyMountPath = "/.llama"

// Convert converts one LlamaStackDistribution.
func Convert(in *llamav1alpha1.LlamaStackDistribution, opts Options) (*ogxv1beta1.OGXServer, []Note) {
	suffix := opts.Suffix
	if suffix == "" {
		suffix = DefaultSuffix
	}
	var notes []Note
	note := func(field, format string, args ...any) {
		notes = append(notes, Note{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	out := &ogxv1beta1.OGXServer{
		TypeMeta: metav1.TypeMeta{APIVersion: ogxv1beta1.GroupVersion.String(), Kind: ogxv1beta1.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        in.Name + suffix,
			Namespace:   in.Namespace,
			Labels:      maps.Clone(in.Labels),
			Annotations: maps.Clone(in.Annotations),
		},
	}
	if out.Annotations != nil {
		delete(out.Annotations, corev1.LastAppliedConfigAnnotation)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}
	s, spec := in.Spec.Server, &out.Spec
	w := &ogxv1beta1.WorkloadSpec{}

	spec.Distribution = ogxv1beta1.DistributionSpec{Name: s.Distribution.Name, Image: s.Distribution.Image}
	if n := s.Distribution.Name; n != "" && !slices.Contains(distributions, n) {
		note("spec.server.distribution.name", "OGX has no distribution %q (it has %s); kept, the OGXServer reports it until you choose one or set spec.distribution.image", n, strings.Join(distributions, ", "))
	}
	if s.Distribution.Image != "" {
		note("spec.server.distribution.image", "%s is an image of the old server; an OGXServer needs an OGX image", s.Distribution.Image)
	}

	if in.Spec.Replicas != 1 {
		w.Replicas = ptr.To(in.Spec.Replicas)
	}
	w.Workers = s.Workers
	cs := s.ContainerSpec
	if cs.Name != "" && cs.Name != "llama-stack" {
		note("spec.server.containerSpec.name", "dropped: the container is always named %q", ogxv1beta1.DefaultContainerName)
	}
	if cs.Port != 0 && cs.Port != ogxv1beta1.DefaultServerPort {
		spec.Network = &ogxv1beta1.NetworkSpec{Port: cs.Port}
	}
	if len(cs.Resources.Limits) > 0 || len(cs.Resources.Requests) > 0 || len(cs.Resources.Claims) > 0 {
		w.Resources = cs.Resources.DeepCopy()
	}
	o := &ogxv1beta1.WorkloadOverrides{Env: cs.Env, Command: cs.Command, Args: cs.Args}
	for i, e := range cs.Env {
		if strings.HasPrefix(e.Name, "LLAMA_STACK_") {
			note(fmt.Sprintf("spec.server.containerSpec.env[%d]", i), "%s is read by the old server; the OGX server reads OGX_* variables", e.Name)
		}
	}
	if len(cs.EnvFrom) > 0 {
		note("spec.server.containerSpec.envFrom", "an OGXServer has no envFrom: list the variables in spec.workload.overrides.env (valueFrom for Secrets and ConfigMaps)")
	}
	if po := s.PodOverrides; po != nil {
		o.ServiceAccountName, o.Volumes, o.VolumeMounts = po.ServiceAccountName, po.Volumes, po.VolumeMounts
		if po.TerminationGracePeriodSeconds != nil {
			note("spec.server.podOverrides.terminationGracePeriodSeconds", "an OGXServer has no counterpart; the pods get Kubernetes' default (30 s)")
		}
	}
	if o.ServiceAccountName != "" || len(o.Env) > 0 || len(o.Command) > 0 || len(o.Args) > 0 || len(o.Volumes) > 0 || len(o.VolumeMounts) > 0 {
		w.Overrides = o
	}
	if pdb := s.PodDisruptionBudget; pdb != nil {
		w.PodDisruptionBudget = &ogxv1beta1.PodDisruptionBudgetSpec{MinAvailable: pdb.MinAvailable, MaxUnavailable: pdb.MaxUnavailable}
	}
	w.TopologySpreadConstraints = s.TopologySpreadConstraints
	if as := s.Autoscaling; as != nil {
		w.Autoscaling = &ogxv1beta1.AutoscalingSpec{MinReplicas: as.MinReplicas, MaxReplicas: as.MaxReplicas, TargetCPUUtilizationPercentage: as.TargetCPUUtilizationPercentage, TargetMemoryUtilizationPercentage: as.TargetMemoryUtilizationPercentage}
	}
	if st := s.Storage; st != nil {
		mount := st.MountPath
		if mount == "" {
			mount = legacyMountPath
			note("spec.server.storage.mountPath", "set to %s, where the old server mounted the claim, so that paths on it stay the same (the OGX default is %s)", legacyMountPath, ogxv1beta1.DefaultMountPath)
		}
		w.Storage = &ogxv1beta1.PVCStorageSpec{Size: st.Size, MountPath: mount}
	}
	if uc := s.UserConfig; uc != nil {
		spec.OverrideConfig = &ogxv1beta1.ConfigMapKeyRef{Name: uc.ConfigMapName, Key: "config.yaml"}
		if uc.ConfigMapNamespace != "" && uc.ConfigMapNamespace != in.Namespace {
			note("spec.server.userConfig.configMapNamespace", "an OGXServer reads its ConfigMap in its own namespace: copy ConfigMap %s/%s there", uc.ConfigMapNamespace, uc.ConfigMapName)
		}
	}
	if s.Config != nil {
		note("spec.server.config", "the typed configuration has no OGXServer counterpart: express its providers and models in spec.providers and spec.resources, or put the run.yaml that `render` prints for the old CR in a ConfigMap named by spec.overrideConfig")
	}
	if tc := s.TLSConfig; tc != nil {
		if b := tc.CABundle; b != nil {
			keys := b.ConfigMapKeys
			if len(keys) == 0 {
				keys = []string{"ca-bundle.crt"}
			}
			trust := &ogxv1beta1.TrustConfig{}
			for _, k := range keys {
				trust.CACertificates = append(trust.CACertificates, ogxv1beta1.ConfigMapKeyRef{Name: b.ConfigMapName, Key: k})
			}
			spec.TLS = &ogxv1beta1.TLSClientConfig{Trust: trust}
			if b.ConfigMapNamespace != "" && b.ConfigMapNamespace != in.Namespace {
				note("spec.server.tlsConfig.caBundle.configMapNamespace", "an OGXServer reads its CA ConfigMaps in its own namespace: copy ConfigMap %s/%s there", b.ConfigMapNamespace, b.ConfigMapName)
			}
		}
		for field, v := range map[string]*bool{"serviceCA": tc.ServiceCA, "clusterTrustedCA": tc.ClusterTrustedCA, "publicRoots": tc.PublicRoots} {
			if v != nil && !*v {
				note("spec.server.tlsConfig."+field, "an OGXServer has no switch for it: it is always merged into the bundle")
			}
		}
	}
	if n := in.Spec.Network; n != nil {
		if spec.Network == nil {
			spec.Network = &ogxv1beta1.NetworkSpec{}
		}
		if n.ExposeRoute {
			spec.Network.ExternalAccess = &ogxv1beta1.ExternalAccessConfig{Enabled: true}
		}
		if rule, ok := allowedFrom(n.AllowedFrom, cs.Port); ok {
			spec.Network.Policy = &ogxv1beta1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{rule}}
		}
		if *spec.Network == (ogxv1beta1.NetworkSpec{}) {
			spec.Network = nil
		}
	}
	if spec.Network == nil || spec.Network.Policy == nil {
		note("spec.network", "an OGXServer has a NetworkPolicy by default (pods of its namespace and the operator's may connect); set spec.network.policy.enabled: false for none, or add ingress rules")
	}
	if !reflect.DeepEqual(*w, ogxv1beta1.WorkloadSpec{}) {
		spec.Workload = w
	}
	if !opts.NoAdopt {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[ogxv1beta1.AdoptNetworkingAnnotation] = in.Name
		if s.Storage != nil {
			out.Annotations[ogxv1beta1.AdoptStorageAnnotation] = in.Name
		}
	}
	slices.SortFunc(notes, func(a, b Note) int { return strings.Compare(a.Field, b.Field) })
	return out, notes
}

// allowedFrom is the ingress rule of the old allowedFrom: namespaces by
// name ("*" for all), and namespaces by label ("key" present, or "key=value").
func allowedFrom(af *llamav1alpha1.AllowedFromSpec, port int32) (networkingv1.NetworkPolicyIngressRule, bool) {
	var rule networkingv1.NetworkPolicyIngressRule
	if af == nil || (len(af.Namespaces) == 0 && len(af.Labels) == 0) {
		return rule, false
	}
	var names []string
	for _, ns := range af.Namespaces {
		if ns == "*" {
			rule.From = append(rule.From, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{}})
			continue
		}
		names = append(names, ns)
	}
	if len(names) > 0 {
		rule.From = append(rule.From, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: names}}}})
	}
	for _, l := range af.Labels {
		if k, v, ok := strings.Cut(l, "="); ok {
			rule.From = append(rule.From, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}})
		} else {
			rule.From = append(rule.From, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: l, Operator: metav1.LabelSelectorOpExists}}}})
		}
	}
	if port == 0 {
		port = ogxv1beta1.DefaultServerPort
	}
	rule.Ports = []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
	return rule, true
}
