package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// installRouteAPI installs minimal route.openshift.io/v1 Route and
// security.openshift.io/v1 SecurityContextConstraints CRDs: the cluster looks
// like OpenShift (the operator detects OpenShift by the SCC API).
func installRouteAPI(t *testing.T) {
	t.Helper()
	installAPI(t, "route.openshift.io", "Route", "routes", apiextensionsv1.NamespaceScoped)
	installAPI(t, "security.openshift.io", "SecurityContextConstraints", "securitycontextconstraints", apiextensionsv1.ClusterScoped)
	// The operator remembers capabilities for 500 ms in this suite.
	time.Sleep(time.Second)
	// The shared control plane looks like OpenShift only during the test,
	// whatever order the tests run in.
	t.Cleanup(func() {
		removeAPI(t, "routes.route.openshift.io")
		removeAPI(t, "securitycontextconstraints.security.openshift.io")
	})
}

// installAPI installs a minimal CRD of group/v1 kind.
func installAPI(t *testing.T, group, kind, plural string, scope apiextensionsv1.ResourceScope) {
	t.Helper()
	installAPIVersion(t, group, "v1", kind, plural, scope)
}

// installAPIVersion installs a minimal CRD of group/version kind.
func installAPIVersion(t *testing.T, group, version, kind, plural string, scope apiextensionsv1.ResourceScope) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: version, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	require.NoError(t, client.IgnoreAlreadyExists(c.Create(context.Background(), crd)))
	env.Eventually(t, "the "+kind+" API", func() error {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: crd.Name}, got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established")
	})
	// Established comes a moment before the API server serves the resource.
	env.Eventually(t, "the "+kind+" API served", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind + "List"})
		return k8s.List(context.Background(), list, client.Limit(1))
	})
}

// removeAPI deletes a CRD installAPI installed and waits until the
// operator can have noticed (its capability TTL is 500 ms in this suite).
func removeAPI(t *testing.T, name string) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	require.NoError(t, client.IgnoreNotFound(c.Delete(context.Background(), crd)))
	env.Eventually(t, "the "+name+" API gone", func() error {
		err := c.Get(context.Background(), client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
	})
	time.Sleep(time.Second)
}
