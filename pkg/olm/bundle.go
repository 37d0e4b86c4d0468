// Package olm generates the operator's OLM bundle (registry+v1) from
// config/: the ClusterServiceVersion (the hand-kept base in
// config/manifests, completed with the install strategy, the owned CRDs,
// alm-examples and relatedImages), the CRDs, the metrics Service and the
// ClusterRoles shipped beside the operator, annotations.yaml and
// bundle.Dockerfile. The same inputs give byte-identical output: no
// timestamps, maps sorted.
package olm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Package, channel and names of the bundle.
const (
	Package = "ai-stack-operator"
	Channel = "stable"
	// namePrefix is config/default's.
	namePrefix = "ai-stack-operator-"
	// serviceAccount is the operator's, as config/default names it.
	serviceAccount = namePrefix + "controller-manager"
)

// Options say what to generate.
type Options struct {
	// Root is the repository root.
	Root string
	// Version is the bundle's semantic version (the VERSION file).
	Version string
	// Image is the manager's image; quay.io/ai-stack-operator/ai-stack-operator:v<Version> when empty.
	Image string
	// RelatedImages are the images the operator deploys besides its own, by
	// name (RELATED_IMAGE_<NAME> is set to each in the Deployment).
	RelatedImages map[string]string
}

// File is one generated file, relative to the repository root.
type File struct {
	Path string
	Data []byte
}

// Generate builds the bundle's files, sorted by path.
func Generate(o Options) ([]File, error) {
	v, err := semver.Parse(o.Version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", o.Version, err)
	}
	if o.Image == "" {
		o.Image = "quay.io/ai-stack-operator/ai-stack-operator:v" + v.String()
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := readYAML(filepath.Join(o.Root, "config", "manifests", "bases", Package+".clusterserviceversion.yaml"), csv); err != nil {
		return nil, err
	}
	crds, crdFiles, err := readCRDs(filepath.Join(o.Root, "config", "crd", "bases"))
	if err != nil {
		return nil, err
	}
	if err := ownCRDs(csv, crds); err != nil {
		return nil, err
	}
	examples, err := almExamples(filepath.Join(o.Root, "config", "samples"), csv)
	if err != nil {
		return nil, err
	}
	deployment, err := managerDeployment(o)
	if err != nil {
		return nil, err
	}
	clusterRole, leaderRole := &rbacv1.ClusterRole{}, &rbacv1.Role{}
	if err := readYAML(filepath.Join(o.Root, "config", "rbac", "role.yaml"), clusterRole); err != nil {
		return nil, err
	}
	if err := readYAML(filepath.Join(o.Root, "config", "rbac", "leader_election_role.yaml"), leaderRole); err != nil {
		return nil, err
	}

	cluster, namespaced := splitByScope(clusterRole.Rules)

	csv.Name = Package + ".v" + v.String()
	csv.Spec.Version.Version = v
	csv.Annotations["containerImage"] = o.Image
	csv.Annotations["alm-examples"] = examples
	// Every earlier version upgrades to this one.
	csv.Annotations["olm.skipRange"] = "<" + v.String()
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs:    []operatorsv1alpha1.StrategyDeploymentSpec{{Name: serviceAccount, Label: deployment.Labels, Spec: deployment.Spec}},
			ClusterPermissions: []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: serviceAccount, Rules: cluster}},
			Permissions:        []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: serviceAccount, Rules: append(namespaced, leaderRole.Rules...)}},
		},
	}
	csv.Spec.RelatedImages = relatedImages(o.Image, o.RelatedImages)

	csvYAML, err := marshal(csv, "status", "metadata.creationTimestamp")
	if err != nil {
		return nil, err
	}
	files := []File{{Path: "bundle/manifests/" + Package + ".clusterserviceversion.yaml", Data: csvYAML}}
	files = append(files, crdFiles...)
	extras, err := extraObjects(o.Root)
	if err != nil {
		return nil, err
	}
	files = append(files, extras...)
	relRaw, err := os.ReadFile(filepath.Join(o.Root, ReleasesFile))
	if err != nil {
		return nil, err
	}
	var rel releases
	if err := yaml.UnmarshalStrict(relRaw, &rel); err != nil {
		return nil, fmt.Errorf("%s: %w", ReleasesFile, err)
	}
	cat, err := catalog(csv, rel)
	if err != nil {
		return nil, err
	}
	files = append(files,
		File{Path: "bundle/metadata/annotations.yaml", Data: annotationsYAML()},
		File{Path: "bundle.Dockerfile", Data: dockerfile()},
		File{Path: CatalogDir + "/" + Package + "/catalog.yaml", Data: cat},
		File{Path: "catalog.Dockerfile", Data: catalogDockerfile()},
	)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// clusterScoped are cluster-scoped resources a ClusterRole may name. One
// missing here would be granted as namespaced, and the install rehearsal
// (test/cluster) fails on that.
var clusterScoped = map[string]bool{
	"authentication.k8s.io/tokenreviews":             true,
	"authorization.k8s.io/subjectaccessreviews":      true,
	"rbac.authorization.k8s.io/clusterrolebindings":  true,
	"rbac.authorization.k8s.io/clusterroles":         true,
	"apiextensions.k8s.io/customresourcedefinitions": true,
	"/namespaces":        true,
	"/nodes":             true,
	"/persistentvolumes": true,
	"security.openshift.io/securitycontextconstraints":             true,
	"config.openshift.io/clusterversions":                          true,
	"storage.k8s.io/storageclasses":                                true,
	"admissionregistration.k8s.io/validatingwebhookconfigurations": true,
}

// splitByScope splits the operator's ClusterRole the way OLM scopes a CSV:
// rules on cluster-scoped resources go to clusterPermissions (granted
// cluster-wide in every install mode); rules on namespaced ones to
// permissions, which OLM grants as Roles in the operator's namespace and in
// each target namespace (OwnNamespace, SingleNamespace, MultiNamespace), or
// as a ClusterRole (AllNamespaces). The operator holds no namespaced
// permission outside the namespaces it serves.
func splitByScope(rules []rbacv1.PolicyRule) (cluster, namespaced []rbacv1.PolicyRule) {
	for _, r := range rules {
		var c, n []string
		for _, res := range r.Resources {
			scoped := false
			for _, g := range r.APIGroups {
				base, _, _ := strings.Cut(res, "/")
				scoped = scoped || clusterScoped[g+"/"+base]
			}
			if scoped {
				c = append(c, res)
			} else {
				n = append(n, res)
			}
		}
		if len(r.NonResourceURLs) > 0 {
			cluster = append(cluster, r)
			continue
		}
		if len(c) > 0 {
			rc := *r.DeepCopy()
			rc.Resources = c
			cluster = append(cluster, rc)
		}
		if len(n) > 0 {
			rn := *r.DeepCopy()
			rn.Resources = n
			namespaced = append(namespaced, rn)
		}
	}
	return cluster, namespaced
}

// readYAML reads one object.
func readYAML(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readCRDs reads config/crd/bases, and copies each file into the bundle as is.
func readCRDs(dir string) ([]apiextensionsv1.CustomResourceDefinition, []File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	var crds []apiextensionsv1.CustomResourceDefinition
	var files []File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		crd := apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		crds = append(crds, crd)
		files = append(files, File{Path: "bundle/manifests/" + filepath.Base(p), Data: b})
	}
	if len(crds) == 0 {
		return nil, nil, fmt.Errorf("no CRDs in %s", dir)
	}
	return crds, files, nil
}

// storageVersion is the CRD's storage version.
func storageVersion(crd apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// ownCRDs checks the base CSV's owned CRDs against the CRDs: every CRD is
// described once, at its storage version (kuttl-like drift is an error, not
// a silent omission).
func ownCRDs(csv *operatorsv1alpha1.ClusterServiceVersion, crds []apiextensionsv1.CustomResourceDefinition) error {
	described := map[string]operatorsv1alpha1.CRDDescription{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		described[d.Name] = d
	}
	for _, crd := range crds {
		d, ok := described[crd.Name]
		switch {
		case !ok:
			return fmt.Errorf("CRD %s has no description in the base CSV (config/manifests/bases): add one to customresourcedefinitions.owned", crd.Name)
		case d.Kind != crd.Spec.Names.Kind || d.Version != storageVersion(crd):
			return fmt.Errorf("the base CSV describes %s as %s %s; the CRD says %s %s", crd.Name, d.Kind, d.Version, crd.Spec.Names.Kind, storageVersion(crd))
		}
		delete(described, crd.Name)
	}
	for name := range described {
		return fmt.Errorf("the base CSV describes %s, which config/crd/bases does not define", name)
	}
	sort.Slice(csv.Spec.CustomResourceDefinitions.Owned, func(i, j int) bool {
		return csv.Spec.CustomResourceDefinitions.Owned[i].Name < csv.Spec.CustomResourceDefinitions.Owned[j].Name
	})
	return nil
}

// almExamples are the samples of config/samples of the APIs the CSV
// describes (a kind at its storage version: TrustyAIService's v1alpha1
// samples, served too, are not the console's examples), as the JSON list OLM
// reads, sorted by kind and name.
func almExamples(dir string, csv *operatorsv1alpha1.ClusterServiceVersion) (string, error) {
	owned := map[string]bool{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(d.Name, ".")
		owned[group+"/"+d.Version+"/"+d.Kind] = true
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	var examples []map[string]any
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		for _, doc := range bytes.Split(b, []byte("\n---")) {
			obj := map[string]any{}
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			api, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			if owned[api+"/"+kind] {
				examples = append(examples, obj)
			}
		}
	}
	sort.SliceStable(examples, func(i, j int) bool {
		ki := fmt.Sprint(examples[i]["kind"], examples[i]["apiVersion"], examples[i]["metadata"].(map[string]any)["name"])
		kj := fmt.Sprint(examples[j]["kind"], examples[j]["apiVersion"], examples[j]["metadata"].(map[string]any)["name"])
		return ki < kj
	})
	b, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// managerDeployment is config/manager's Deployment as OLM runs it: the
// image, WATCH_NAMESPACE from OLM's target namespaces, and RELATED_IMAGE_
// variables for every image the operator deploys (disconnected mirrors
// rewrite them).
func managerDeployment(o Options) (*appsv1.Deployment, error) {
	b, err := os.ReadFile(filepath.Join(o.Root, "config", "manager", "manager.yaml"))
	if err != nil {
		return nil, err
	}
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal(doc, d); err != nil {
			return nil, err
		}
		if d.Kind != "Deployment" {
			continue
		}
		d.Spec.Template.Spec.ServiceAccountName = serviceAccount
		c := &d.Spec.Template.Spec.Containers[0]
		c.Image = o.Image
		var env []corev1.EnvVar
		for _, e := range c.Env {
			if e.Name == "WATCH_NAMESPACE" {
				e = corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}}
			}
			env = append(env, e)
		}
		for _, name := range slices.Sorted(maps.Keys(o.RelatedImages)) {
			env = append(env, corev1.EnvVar{Name: envName(name), Value: o.RelatedImages[name]})
		}
		c.Env = env
		return d, nil
	}
	return nil, fmt.Errorf("config/manager/manager.yaml has no Deployment")
}

// envName is RELATED_IMAGE_<NAME>, as pkg/settings reads it.
func envName(name string) string {
	if strings.HasPrefix(name, "RELATED_IMAGE_") {
		return name
	}
	return "RELATED_IMAGE_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// relatedImages lists the manager and every image it deploys, by name.
func relatedImages(manager string, images map[string]string) []operatorsv1alpha1.RelatedImage {
	out := []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: manager}}
	for _, name := range slices.Sorted(maps.Keys(images)) {
		out = append(out, operatorsv1alpha1.RelatedImage{Name: strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(envName(name), "RELATED_IMAGE_"), "_", "-")), Image: images[name]})
	}
	return out
}

// extraObjects are the objects OLM creates beside the CSV: the metrics
// Service, the metrics-reader ClusterRole (bind it to the scraper) and the
// ClusterRole the TrustyAI proxies are bound to (the operator may bind it
// because it holds its rules), and the one an administrator binds in a
// namespace to let the operator see a TrustyAI database CA, and each kind's
// editor and viewer roles, aggregated into the cluster's admin, edit and view
// roles so that namespace users may manage the CRs, and the roles EvalHubs'
// grants bind (config/rbac/evalhub_roles.yaml, whose evalhub-tenant-user and
// -admin are aggregated too). Names carry config/default's prefix.
func extraObjects(root string) ([]File, error) {
	var files []File
	type source struct{ path, kind, group string }
	// Each kind's editor and viewer roles, in file order.
	var kindRoles []source
	for _, pattern := range []string{"config/rbac/*_editor_role.yaml", "config/rbac/*_viewer_role.yaml"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				return nil, err
			}
			kindRoles = append(kindRoles, source{filepath.ToSlash(rel), "clusterrole", "rbac.authorization.k8s.io_v1"})
		}
	}
	slices.SortFunc(kindRoles, func(a, b source) int { return strings.Compare(a.path, b.path) })
	for _, src := range append([]source{
		{"config/default/operator/metrics_service.yaml", "service", "v1"},
		{"config/rbac/metrics_reader_role.yaml", "clusterrole", "rbac.authorization.k8s.io_v1"},
		{"config/rbac/trustyai_proxy_role.yaml", "clusterrole", "rbac.authorization.k8s.io_v1"},
		{"config/rbac/trustyai_db_ca_reader_role.yaml", "clusterrole", "rbac.authorization.k8s.io_v1"},
		{"config/rbac/evalhub_roles.yaml", "clusterrole", "rbac.authorization.k8s.io_v1"},
	}, kindRoles...) {
		objs, err := readYAMLDocuments(filepath.Join(root, src.path))
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			meta := obj["metadata"].(map[string]any)
			meta["name"] = namePrefix + meta["name"].(string)
			delete(meta, "namespace")
			b, err := marshal(obj)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Path: fmt.Sprintf("bundle/manifests/%s_%s_%s.yaml", meta["name"], src.group, src.kind), Data: b})
		}
	}
	return files, nil
}

// readYAMLDocuments reads every object of a file of YAML documents.
func readYAMLDocuments(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(b), "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
	return out, nil
}

// annotations are the bundle's metadata, also the image's labels.
func annotations() [][2]string {
	return [][2]string{
		{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
		{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
		{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
		{"operators.operatorframework.io.bundle.package.v1", Package},
		{"operators.operatorframework.io.bundle.channels.v1", Channel},
		{"operators.operatorframework.io.bundle.channel.default.v1", Channel},
	}
}

func annotationsYAML() []byte {
	var b strings.Builder
	b.WriteString("# Generated by `make bundle`; do not edit.\nannotations:\n")
	for _, a := range annotations() {
		fmt.Fprintf(&b, "  %s: %s\n", a[0], a[1])
	}
	return []byte(b.String())
}

func dockerfile() []byte {
	var b strings.Builder
	b.WriteString("# Generated by `make bundle`; do not edit. Build with `make bundle-build`.\nFROM scratch\n\n")
	for _, a := range annotations() {
		fmt.Fprintf(&b, "LABEL %s=%s\n", a[0], a[1])
	}
	b.WriteString("\nCOPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\n")
	return []byte(b.String())
}

// marshal renders an object as YAML, without the given (dotted) fields.
func marshal(obj any, drop ...string) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	for _, d := range drop {
		parts := strings.Split(d, ".")
		cur := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = next
		}
		if cur != nil {
			delete(cur, parts[len(parts)-1])
		}
	}
	y, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Generated by `make bundle` from config/; do not edit.\n"), y...), nil
}
