package values

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/distributions"
)

// LlamaStackInputs are what the translation needs besides the CR itself.
type LlamaStackInputs struct {
	// Distributions maps distribution names to images.
	Distributions distributions.Table
	// CommonLabels are added to every rendered object.
	CommonLabels map[string]string
}

// LlamaStackValues are the values of the llama-stack-distribution chart
// (charts/llama-stack-distribution/values.yaml documents each one).
type LlamaStackValues struct {
	Name           string            `json:"name"`
	CommonLabels   map[string]string `json:"commonLabels,omitempty"`
	Replicas       int32             `json:"replicas"`
	Image          string            `json:"image"`
	Container      Container         `json:"container"`
	Storage        Storage           `json:"storage"`
	UserConfig     UserConfig        `json:"userConfig"`
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
}

// Container are the server container's values.
type Container struct {
	Name      string                       `json:"name"`
	Port      int32                        `json:"port"`
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	Env       []corev1.EnvVar              `json:"env,omitempty"`
	Command   []string                     `json:"command,omitempty"`
	Args      []string                     `json:"args,omitempty"`
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

// LlamaStack translates a LlamaStackDistribution into chart values.
func LlamaStack(cr *llamav1alpha1.LlamaStackDistribution, in LlamaStackInputs) (*LlamaStackValues, error) {
	spec := cr.Spec
	server := spec.Server
	v := &LlamaStackValues{
		Name:         cr.Name,
		CommonLabels: in.CommonLabels,
		Replicas:     spec.Replicas,
		Container: Container{
			Name:    server.ContainerSpec.Name,
			Port:    server.ContainerSpec.Port,
			Env:     server.ContainerSpec.Env,
			Command: server.ContainerSpec.Command,
			Args:    server.ContainerSpec.Args,
		},
		Storage: Storage{MountPath: llamav1alpha1.DefaultMountPath},
	}
	if v.Container.Name == "" {
		v.Container.Name = llamav1alpha1.DefaultContainerName
	}
	if v.Container.Port == 0 {
		v.Container.Port = llamav1alpha1.DefaultServerPort
	}
	if r := server.ContainerSpec.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 || len(r.Claims) > 0 {
		// Quantities marshal in canonical form (1000m -> "1"), as the API server stores them.
		v.Container.Resources = r.DeepCopy()
	}

	image, err := distributionImage(server.Distribution, in.Distributions)
	if err != nil {
		return nil, err
	}
	v.Image = image

	if st := server.Storage; st != nil {
		v.Storage.Enabled = true
		v.Storage.Size = llamav1alpha1.DefaultStorageSize
		if st.Size != nil {
			if st.Size.Sign() <= 0 {
				return nil, &FieldError{Field: "spec.server.storage.size", Message: fmt.Sprintf("must be a positive quantity such as 10Gi, got %q", st.Size.String())}
			}
			v.Storage.Size = st.Size.String()
		}
		if st.MountPath != "" {
			v.Storage.MountPath = st.MountPath
		}
	}

	if uc := server.UserConfig; uc != nil {
		if uc.ConfigMapNamespace != "" && uc.ConfigMapNamespace != cr.Namespace {
			return nil, &FieldError{
				Field:   "spec.server.userConfig.configMapNamespace",
				Message: fmt.Sprintf("a pod can only mount a ConfigMap of its own namespace; copy ConfigMap %q into namespace %q and clear this field", uc.ConfigMapName, cr.Namespace),
			}
		}
		v.UserConfig.ConfigMapName = uc.ConfigMapName
	}
	return v, nil
}

func distributionImage(d llamav1alpha1.DistributionType, table distributions.Table) (string, error) {
	switch {
	case d.Name != "" && d.Image != "":
		return "", &FieldError{Field: "spec.server.distribution", Message: "set exactly one of name or image, not both"}
	case d.Image != "":
		return d.Image, nil
	case d.Name != "":
		img, err := table.Image(d.Name)
		if err != nil {
			return "", &FieldError{Field: "spec.server.distribution.name", Message: err.Error() + "; or set spec.server.distribution.image instead"}
		}
		return img, nil
	default:
		return "", &FieldError{Field: "spec.server.distribution", Message: "set exactly one of name (a distribution name such as starter) or image"}
	}
}

// Map converts values into the generic form Helm takes (and stores in a
// release): a JSON round trip, so that values compare equal to a stored release's.
func Map(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}
