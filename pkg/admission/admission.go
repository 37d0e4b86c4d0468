// Package admission checks custom resources as the API server would admit
// them (schema defaults, validation and CEL rules of the CRDs), offline: for
// cmd/render and tests. It links the API server's validation packages, so
// the operator's binary must not import it (pkg/release's boundary test).
package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Admission does to a CR what the API server does on create, offline: it
// refuses unknown fields (as kubectl's strict field validation does), applies
// the CRD's defaults, and validates the result against the CRD's structural
// schema, its CEL rules and the metadata rules (name, namespace). A CR that
// Admit refuses is one the API server refuses, so `render` (cmd/render) and the
// tests can observe "refused" without a cluster.
type Admission struct {
	versions map[schema.GroupVersionKind]*admissionVersion
}

type admissionVersion struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
	namespaced bool
}

// NewAdmission builds an Admission from CRDs.
func NewAdmission(crds []*apiextensionsv1.CustomResourceDefinition) (*Admission, error) {
	a := &Admission{versions: map[schema.GroupVersionKind]*admissionVersion{}}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
			}
			s, err := structuralschema.NewStructural(internal)
			if err != nil {
				return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
			}
			validator, _, err := apiservervalidation.NewSchemaValidator(internal)
			if err != nil {
				return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			a.versions[gvk] = &admissionVersion{
				structural: s,
				validator:  validator,
				cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
				namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			}
		}
	}
	return a, nil
}

// Serves says whether a CRD serves the kind in that version.
func (a *Admission) Serves(gvk schema.GroupVersionKind) bool {
	_, ok := a.versions[gvk]
	return ok
}

// Refused is a CR the API server would refuse; Errors name each field.
type Refused struct {
	Errors field.ErrorList
}

func (r *Refused) Error() string {
	msgs := make([]string, 0, len(r.Errors))
	for _, e := range r.Errors {
		msgs = append(msgs, e.Error())
	}
	return "the API server would refuse it: " + strings.Join(msgs, "; ")
}

// Admit defaults the object in place and validates it; objects of unknown
// kinds are left as they are. It returns a *Refused for what the API server
// would refuse.
func (a *Admission) Admit(ctx context.Context, u *unstructured.Unstructured) error {
	v, ok := a.versions[u.GroupVersionKind()]
	if !ok {
		return nil
	}
	var errs field.ErrorList
	// Unknown fields: pruned by the server, refused by kubectl's default strict validation.
	probe := u.DeepCopy()
	unknown := structuralpruning.PruneWithOptions(probe.Object, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	sort.Strings(unknown)
	for _, p := range unknown {
		errs = append(errs, field.Invalid(field.NewPath(p), nil, "unknown field"))
	}
	if len(errs) > 0 {
		return &Refused{Errors: errs}
	}
	structuraldefaulting.Default(u.Object, v.structural)

	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(u, v.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), v.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	if len(errs) == 0 {
		// The server runs CEL rules only on objects that pass the schema.
		celErrs, _ := v.cel.Validate(ctx, nil, v.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	if len(errs) > 0 {
		return &Refused{Errors: errs}
	}
	return nil
}
