package olm

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// managerImage is the image name config/manager's kustomization sets.
const managerImage = "quay.io/ai-stack-operator/ai-stack-operator"

// Installer is config/default built by kustomize (the library, as `kubectl
// kustomize` builds it) with the manager's image set to image: every object
// an installation without OLM applies (the namespace, the CRDs, the RBAC,
// the admission policies, the Deployment and its Services), as one YAML
// stream (`make build-installer` writes it to dist/install.yaml; `make
// deploy` applies it).
func Installer(root, image string) ([]byte, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "default"))
	if err != nil {
		return nil, fmt.Errorf("kustomize build config/default: %w", err)
	}
	// The image, as `kustomize edit set image` sets it.
	name, tag, digest := splitImage(image)
	if err := res.ApplyFilter(imagetag.LegacyFilter{ImageTag: types.Image{Name: managerImage, NewName: name, NewTag: tag, Digest: digest}}); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString("# The operator without OLM: `kubectl apply --server-side -f install.yaml` (make build-installer).\n")
	b, err := res.AsYaml()
	if err != nil {
		return nil, err
	}
	out.Write(b)
	return out.Bytes(), nil
}

// splitImage splits an image reference into name, tag and digest.
func splitImage(image string) (name, tag, digest string) {
	name = image
	name, digest, _ = strings.Cut(name, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}
