package render

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Defaulter applies the defaults of CRD schemas to objects, as the API server
// does on create, so that an offline render sees what the operator would see.
type Defaulter struct {
	schemas map[schema.GroupVersionKind]*structuralschema.Structural
}

// NewDefaulter builds a Defaulter from CRDs.
func NewDefaulter(crds []*apiextensionsv1.CustomResourceDefinition) (*Defaulter, error) {
	d := &Defaulter{schemas: map[schema.GroupVersionKind]*structuralschema.Structural{}}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
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
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			d.schemas[gvk] = s
		}
	}
	return d, nil
}

// Default applies the defaults of the object's CRD in place; objects of
// unknown kinds are left as they are.
func (d *Defaulter) Default(u *unstructured.Unstructured) {
	if s, ok := d.schemas[u.GroupVersionKind()]; ok {
		structuraldefaulting.Default(u.Object, s)
	}
}
