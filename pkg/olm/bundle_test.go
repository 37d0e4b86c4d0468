package olm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

var root = filepath.Join("..", "..")

func committedCSV(t *testing.T) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	require.NoError(t, readYAML(filepath.Join(root, "bundle", "manifests", Package+".clusterserviceversion.yaml"), csv))
	return csv
}

// The same inputs give byte-identical files, with no timestamps.
func TestGenerateIsDeterministic(t *testing.T) {
	o := Options{Root: root, Version: "0.1.0", RelatedImages: map[string]string{"starter": "docker.io/llamastack/distribution-starter:0.2.23"}}
	a, err := Generate(o)
	require.NoError(t, err)
	b, err := Generate(o)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	for _, f := range a {
		assert.NotContains(t, string(f.Data), "createdAt", f.Path)
		assert.NotContains(t, string(f.Data), "creationTimestamp: \"20", f.Path)
	}
	_, err = Generate(Options{Root: root, Version: "v1"})
	assert.ErrorContains(t, err, "version", "the version is semantic")
}

// validatorResults runs operator-framework/api's default bundle validators
// and the operatorframework optional suite (what `operator-sdk bundle
// validate --select-optional suite=operatorframework` runs) for one
// Kubernetes version.
func validatorResults(t *testing.T, b *manifests.Bundle, k8sVersion string) []errors.ManifestResult {
	t.Helper()
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": k8sVersion})
	suite := interfaces.Validators{
		validation.OperatorHubV2Validator, validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator,
		validation.AlphaDeprecatedAPIsValidator, validation.GoodPracticesValidator,
	}
	return append(validation.DefaultBundleValidators.Validate(objs...), suite.Validate(objs...)...)
}

// The committed bundle passes every validator with zero errors and zero
// warnings, for each Kubernetes minor from the CSV's minKubeVersion to 1.37.
func TestBundleValidates(t *testing.T) {
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle", "manifests"))
	require.NoError(t, err)
	require.NotNil(t, b.CSV)
	minVersion := committedCSV(t).Spec.MinKubeVersion
	require.Equal(t, "1.30.0", minVersion)
	for minor := 30; minor <= 37; minor++ {
		v := fmt.Sprintf("1.%d", minor)
		t.Run(v, func(t *testing.T) {
			var problems []string
			for _, r := range validatorResults(t, b, v) {
				for _, e := range r.Errors {
					problems = append(problems, "error: "+e.Error())
				}
				for _, w := range r.Warnings {
					problems = append(problems, "warning: "+w.Error())
				}
			}
			assert.Empty(t, problems, "validators for Kubernetes %s", v)
		})
	}
}

// schemaHas says whether a descriptor path (dotted, as OLM writes it) exists
// under the schema.
func schemaHas(s *apiextensionsv1.JSONSchemaProps, path string) bool {
	for _, part := range strings.Split(path, ".") {
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(s.Properties) == 0 {
			return true
		}
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
		}
		next, ok := s.Properties[part]
		if !ok {
			return false
		}
		s = &next
	}
	return true
}

// Every spec and status descriptor of the CSV names a field of its CRD's
// schema (at the described version).
func TestDescriptorsExistInTheSchemas(t *testing.T) {
	csv := committedCSV(t)
	_, files, err := readCRDs(filepath.Join(root, "config", "crd", "bases"))
	require.NoError(t, err)
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, f := range files {
		crd := apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(f.Data, &crd))
		for _, v := range crd.Spec.Versions {
			schemas[crd.Name+"/"+v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	require.Len(t, csv.Spec.CustomResourceDefinitions.Owned, 6)
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		s := schemas[d.Name+"/"+d.Version]
		require.NotNil(t, s, d.Name)
		spec, status := s.Properties["spec"], s.Properties["status"]
		require.NotEmpty(t, d.SpecDescriptors, d.Name)
		require.NotEmpty(t, d.StatusDescriptors, d.Name)
		for _, sd := range d.SpecDescriptors {
			assert.True(t, schemaHas(&spec, sd.Path), "%s: spec descriptor %s is not a field of the schema", d.Name, sd.Path)
		}
		for _, sd := range d.StatusDescriptors {
			assert.True(t, schemaHas(&status, sd.Path), "%s: status descriptor %s is not a field of the schema", d.Name, sd.Path)
		}
	}
	spec := schemas["trustyaiservices.trustyai.opendatahub.io/v1"].Properties["spec"]
	assert.False(t, schemaHas(&spec, "storage.nope"), "the check can fail")
}

// What the generator adds: alm-examples from config/samples, relatedImages
// for every image, WATCH_NAMESPACE from OLM's target namespaces, and the
// upgrade path.
func TestGeneratedCSV(t *testing.T) {
	csv := committedCSV(t)
	assert.Equal(t, Package+".v"+csv.Spec.Version.String(), csv.Name)
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(v)), csv.Spec.Version.String(), "the committed bundle is the VERSION file's")
	assert.Equal(t, "<"+csv.Spec.Version.String(), csv.Annotations["olm.skipRange"])

	var examples []map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples))
	samples, _ := filepath.Glob(filepath.Join(root, "config", "samples", "*_*.yaml"))
	var storageSamples []string
	for _, s := range samples {
		if !strings.Contains(s, "v1alpha1_trustyaiservice") {
			storageSamples = append(storageSamples, s)
		}
	}
	assert.Len(t, examples, len(storageSamples), "one example per sample CR of a described version")

	images := map[string]string{}
	for _, r := range csv.Spec.RelatedImages {
		images[r.Name] = r.Image
	}
	dep := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	assert.Equal(t, images["manager"], dep.Image)
	assert.Equal(t, csv.Annotations["containerImage"], dep.Image)
	env := map[string]string{}
	for _, e := range dep.Env {
		env[e.Name] = e.Value
		if e.Name == "WATCH_NAMESPACE" {
			require.NotNil(t, e.ValueFrom)
			assert.Equal(t, "metadata.annotations['olm.targetNamespaces']", e.ValueFrom.FieldRef.FieldPath)
		}
	}
	assert.Equal(t, images["odh-trustyai-service-py-image"], env["RELATED_IMAGE_ODH_TRUSTYAI_SERVICE_PY_IMAGE"])
	assert.Equal(t, images["starter"], env["RELATED_IMAGE_STARTER"])
	assert.Len(t, images, len(env)-2+1, "every related image but the manager's is a RELATED_IMAGE_ variable (env also has WATCH_NAMESPACE and POD_NAMESPACE)")
}

// bundle.Dockerfile's labels are annotations.yaml's.
func TestDockerfileLabelsAreTheAnnotations(t *testing.T) {
	df, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	require.NoError(t, err)
	ann := struct {
		Annotations map[string]string `json:"annotations"`
	}{}
	require.NoError(t, readYAML(filepath.Join(root, "bundle", "metadata", "annotations.yaml"), &ann))
	require.Len(t, ann.Annotations, 6)
	for k, v := range ann.Annotations {
		assert.True(t, bytes.Contains(df, []byte("LABEL "+k+"="+v+"\n")), "label %s", k)
	}
}

// Rules split by the scope of their resources, a mixed rule in two.
func TestSplitByScope(t *testing.T) {
	cluster, namespaced := splitByScope([]rbacv1.PolicyRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings", "rolebindings"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces"}, Verbs: []string{"list"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"llamastack.io"}, Resources: []string{"llamastackdistributions/status"}, Verbs: []string{"patch"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	})
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}, cluster)
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}},
		{APIGroups: []string{"llamastack.io"}, Resources: []string{"llamastackdistributions/status"}, Verbs: []string{"patch"}},
	}, namespaced)

	csv := committedCSV(t)
	var granted []string
	for _, r := range csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].Rules {
		granted = append(granted, r.Resources...)
	}
	assert.ElementsMatch(t, []string{"namespaces", "tokenreviews", "subjectaccessreviews", "clusterrolebindings", "clusterroles", "clusterroles"}, granted, "cluster-wide: only what is cluster-scoped (namespaces: EvalHub tenants; bind: the anyuid role and the EvalHub roles)")
}
