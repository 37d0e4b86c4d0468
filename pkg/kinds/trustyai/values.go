package trustyai

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// AnnotationCABundleHash on the pod template is the merged CA bundle's
// content hash: the pods restart exactly when it changes.
const AnnotationCABundleHash = "configmap.hash/ca-bundle"

// valuesInputs are what the translation needs besides the CR.
type valuesInputs struct {
	Settings     Settings
	CommonLabels map[string]string
	Platform     platform.Cluster
	// ClaimedStorage is the size the existing PVC requests, nil when there
	// is none; a smaller spec size is not applied (claims cannot shrink).
	ClaimedStorage *resource.Quantity
	// DatabaseCA is true when Secret <name>-db-ca exists.
	DatabaseCA bool
	// Trust is the CA bundle to mount: its ConfigMap ("" for none) and hash.
	TrustConfigMap, TrustHash string
	// SidecarClients is true when a model server of the namespace that logs
	// to the service has an Istio sidecar (sidecarClient; offline, when
	// Istio's APIs are assumed).
	SidecarClients bool
}

// chartValues are the values of the trustyai-service chart
// (charts/trustyai-service/values.yaml documents each one). Strings are
// never omitted: an empty one must override the chart's default.
type chartValues struct {
	Name                    string            `json:"name"`
	CommonLabels            map[string]string `json:"commonLabels,omitempty"`
	Replicas                int32             `json:"replicas"`
	ProgressDeadlineSeconds int32             `json:"progressDeadlineSeconds,omitempty"`
	Image                   string            `json:"image"`
	ProxyImage              string            `json:"proxyImage"`
	Storage                 storageValues     `json:"storage"`
	Data                    dataValues        `json:"data"`
	Metrics                 metricsValues     `json:"metrics"`
	TLS                     tlsValues         `json:"tls"`
	Capabilities            capabilityValues  `json:"capabilities"`
	Trust                   trustValues       `json:"trust"`
	Ingress                 ingressValues     `json:"ingress"`
	Istio                   istioValues       `json:"istio"`
	PodAnnotations          map[string]string `json:"podAnnotations,omitempty"`
}

type storageValues struct {
	Format         string `json:"format"`
	Folder         string `json:"folder"`
	Size           string `json:"size"`
	DatabaseSecret string `json:"databaseSecret"`
	Migration      bool   `json:"migration"`
	DatabaseCA     bool   `json:"databaseCA"`
}

type dataValues struct {
	Filename string `json:"filename"`
	Format   string `json:"format"`
}

type metricsValues struct {
	Schedule string `json:"schedule"`
	// BatchSize goes to the chart as a JSON string: Helm's values are
	// generic JSON, whose numbers are float64, exact to 2^53 only (and
	// 9223372036854775807 came out as -9223372036854775808); the CRD admits
	// any 64-bit integer from 1, as upstream's does.
	BatchSize int `json:"batchSize,string"`
}

type tlsValues struct {
	Mode       string `json:"mode"`
	IssuerKind string `json:"issuerKind"`
	IssuerName string `json:"issuerName"`
}

type capabilityValues struct {
	Route          bool `json:"route"`
	ServiceMonitor bool `json:"serviceMonitor"`
	OpenShift      bool `json:"openshift"`
	CertManager    bool `json:"certManager"`
	Istio          bool `json:"istio"`
}

// istioValues: the chart renders the mesh's routes to the service
// (DestinationRule <name>-internal, VirtualService <name>-redirect) for
// model servers with an Istio sidecar.
type istioValues struct {
	SidecarClients bool `json:"sidecarClients"`
}

// ingressValues expose the service where there is no Route API; no
// Ingress without a host.
type ingressValues struct {
	Host      string `json:"host"`
	ClassName string `json:"className"`
}

type trustValues struct {
	ConfigMapName    string `json:"configMapName"`
	ServiceCA        bool   `json:"serviceCA"`
	ClusterTrustedCA bool   `json:"clusterTrustedCA"`
}

// isMigration is upstream's rule: DATABASE mode with a folder and a data file
// migrates the PVC's data into the database.
func isMigration(cr *trustyv1.TrustyAIService) bool {
	s := cr.Spec.Storage
	return s.Format == trustyv1.StorageDatabase && s.Folder != "" && cr.Spec.Data.Filename != ""
}

// usesClaim says whether the CR's pods mount the PVC.
func usesClaim(cr *trustyv1.TrustyAIService) bool {
	return cr.Spec.Storage.Format == trustyv1.StoragePVC || isMigration(cr)
}

// podReplicas is the number of pods the CR runs: spec.replicas (1 when
// unset), but always 1 where the pods mount the PVC (PVC mode, a migration):
// one pod mounts a ReadWriteOnce claim, and upstream always runs 1.
// replicasIgnored says so to the user.
func podReplicas(cr *trustyv1.TrustyAIService) int32 {
	if cr.Spec.Replicas == nil || usesClaim(cr) {
		return 1
	}
	return *cr.Spec.Replicas
}

// replicasIgnored is why spec.replicas is not what runs, "" when it is (or
// is not set): ReplicasHonored's message.
func replicasIgnored(cr *trustyv1.TrustyAIService) string {
	if cr.Spec.Replicas == nil || *cr.Spec.Replicas == 1 || !usesClaim(cr) {
		return ""
	}
	if isMigration(cr) {
		return fmt.Sprintf("spec.replicas is %d, but a migration runs 1 pod: it reads the data from a ReadWriteOnce claim (DATABASE mode with spec.storage.folder and spec.data.filename), which one pod mounts; set spec.replicas to 1 or remove it, or, once the data is migrated, remove spec.storage.folder and spec.data.filename to run several pods", *cr.Spec.Replicas)
	}
	return fmt.Sprintf("spec.replicas is %d, but PVC mode runs 1 pod: the service keeps its data on a ReadWriteOnce claim, which one pod mounts (upstream always runs 1); set spec.replicas to 1 or remove it, or use DATABASE mode (spec.storage.format: DATABASE) to run several pods", *cr.Spec.Replicas)
}

// translate translates a TrustyAIService into chart values. The CRD refuses
// most bad input already; these checks also cover CRs stored before it did,
// and offline renders.
func translate(cr *trustyv1.TrustyAIService, in valuesInputs) (*chartValues, error) {
	spec := cr.Spec
	v := &chartValues{
		Name:                    cr.Name,
		CommonLabels:            in.CommonLabels,
		Replicas:                podReplicas(cr),
		ProgressDeadlineSeconds: in.Settings.ProgressDeadlineSeconds,
		Image:                   in.Settings.ServiceImage,
		ProxyImage:              in.Settings.ProxyImage,
		Storage: storageValues{
			Format: spec.Storage.Format, Folder: spec.Storage.Folder,
			DatabaseSecret: spec.Storage.DatabaseConfigurations, Migration: isMigration(cr),
		},
		Data:    dataValues{Filename: spec.Data.Filename, Format: spec.Data.Format},
		Metrics: metricsValues{Schedule: spec.Metrics.Schedule, BatchSize: trustyv1.DefaultBatchSize},
		TLS:     tlsValues{Mode: in.Platform.TLSMode()},
		Capabilities: capabilityValues{
			Route: in.Platform.Route, ServiceMonitor: in.Platform.ServiceMonitor,
			OpenShift: in.Platform.OpenShift, CertManager: in.Platform.CertManager, Istio: in.Platform.Istio,
		},
		Istio: istioValues{SidecarClients: in.SidecarClients},
		Trust: trustValues{ConfigMapName: in.TrustConfigMap, ServiceCA: in.Platform.OpenShift, ClusterTrustedCA: in.Platform.OpenShift},
	}
	if !in.Platform.Route && in.Settings.IngressDomain != "" {
		v.Ingress = ingressValues{Host: ingressHost(cr.Name, cr.Namespace, in.Settings.IngressDomain), ClassName: in.Settings.IngressClass}
	}
	if v.Storage.DatabaseSecret == "" {
		v.Storage.DatabaseSecret = dbCredentialsName(cr.Name)
	}
	if v.TLS.Mode == platform.TLSCertManager {
		v.TLS.IssuerKind, v.TLS.IssuerName = in.Settings.IssuerKind, in.Settings.IssuerName
	}
	if spec.Metrics.BatchSize != nil {
		v.Metrics.BatchSize = *spec.Metrics.BatchSize
	}
	switch {
	case spec.Storage.Format != trustyv1.StoragePVC && spec.Storage.Format != trustyv1.StorageDatabase:
		return nil, status.Invalid("spec.storage.format", "must be PVC or DATABASE, got %q", spec.Storage.Format)
	case checkSchedule(spec.Metrics.Schedule) != nil:
		return nil, checkSchedule(spec.Metrics.Schedule)
	case v.Metrics.BatchSize < 1:
		return nil, status.Invalid("spec.metrics.batchSize", "must be 1 or more, got %d", v.Metrics.BatchSize)
	case spec.Replicas != nil && *spec.Replicas < 0:
		return nil, status.Invalid("spec.replicas", "must not be negative, got %d", *spec.Replicas)
	}
	if usesClaim(cr) {
		if spec.Storage.Folder == "" || spec.Storage.Folder[0] != '/' {
			return nil, status.Invalid("spec.storage.folder", "must be an absolute path such as /inputs, got %q", spec.Storage.Folder)
		}
		if err := checkFolder(cr); err != nil {
			return nil, err
		}
		size, err := claimSize(cr, in.ClaimedStorage)
		if err != nil {
			return nil, err
		}
		v.Storage.Size = size.String()
	}
	v.Storage.DatabaseCA = spec.Storage.Format == trustyv1.StorageDatabase && in.DatabaseCA
	if in.TrustConfigMap != "" {
		v.PodAnnotations = map[string]string{AnnotationCABundleHash: in.TrustHash}
	}
	return v, nil
}

// reservedMounts are the other mount paths of the trustyai-service
// container (charts/trustyai-service/templates/deployment.yaml), each where
// some platform or spec mounts it.
var reservedMounts = []struct{ path, what string }{
	{"/etc/tls/internal", "the service's internal TLS certificate (Secret <name>-internal)"},
	{"/etc/tls/db", "the database's CA (Secret <name>-db-ca)"},
	{"/etc/pki/ai-stack-operator", "the trusted CA bundle"},
}

// checkFolder refuses a storage folder that is, holds or lies within another
// mount path of the container: the API server refuses a duplicate, and a
// nested mount hides the other volume or cannot be made inside a read-only
// one. Refused on every platform alike, mounted there or not, so that a CR
// valid on one cluster is valid on every one.
func checkFolder(cr *trustyv1.TrustyAIService) error {
	folder := path.Clean(cr.Spec.Storage.Folder)
	for _, m := range reservedMounts {
		if nested(folder, m.path) {
			return status.Invalid("spec.storage.folder", "%q collides with %s, where the operator mounts %s: choose a folder outside it, such as /inputs",
				cr.Spec.Storage.Folder, m.path, strings.ReplaceAll(m.what, "<name>", cr.Name))
		}
	}
	return nil
}

// nested says whether two clean absolute paths are the same, or one lies
// within the other.
func nested(a, b string) bool {
	within := func(child, parent string) bool {
		return parent == "/" || strings.HasPrefix(child, parent+"/")
	}
	return a == b || within(a, b) || within(b, a)
}

// claimSize is the size the claim asks for: the spec's, but never less than
// what the claim asks for already (a claim cannot shrink; the status says so).
func claimSize(cr *trustyv1.TrustyAIService, claimed *resource.Quantity) (resource.Quantity, error) {
	raw := cr.Spec.Storage.Size
	if raw == "" && claimed != nil {
		return *claimed, nil
	}
	q, err := resource.ParseQuantity(raw)
	if err != nil || q.Sign() <= 0 {
		return q, status.Invalid("spec.storage.size", "must be a positive quantity such as 1Gi, got %q", raw)
	}
	if claimed != nil && q.Cmp(*claimed) < 0 {
		return *claimed, nil
	}
	return q, nil
}
