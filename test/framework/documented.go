package framework

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// What the documented install commands apply, for tests that apply exactly
// that: no renaming, no patching (a test that renames what it applies tests
// something no user runs).

// Kustomize is `kubectl kustomize <dir>` (dir relative to the repository
// root): kubectl embeds kustomize's library, as this does.
func Kustomize(t testing.TB, dir string) []byte {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(Root(), dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Objects reads a YAML stream (a build, dist/install.yaml) into objects.
func Objects(t testing.TB, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// ApplyAsDocumented applies the objects unchanged: by server-side apply as
// kubectl does it (`kubectl apply --server-side`: field manager kubectl, no
// --force-conflicts, so a field another manager holds is a conflict, as the
// user would see), or by creating what does not exist (what
// a client-side `kubectl apply` does to a new object). At the test's end it
// deletes what it created, but never a CustomResourceDefinition or a
// Namespace.
func ApplyAsDocumented(t testing.TB, c client.Client, objs []*unstructured.Unstructured, serverSide bool) {
	t.Helper()
	ctx := context.Background()
	var created []*unstructured.Unstructured
	for _, o := range objs {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(o.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(o), existing)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		missing := apierrors.IsNotFound(err)
		if missing && o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			created = append(created, o)
		}
		switch {
		case serverSide:
			err = c.Patch(ctx, o.DeepCopy(), client.Apply, client.FieldOwner("kubectl")) //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
		case missing:
			err = c.Create(ctx, o.DeepCopy())
		default:
			err = nil
		}
		if err != nil {
			t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for i := len(created) - 1; i >= 0; i-- {
			_ = c.Delete(context.Background(), created[i])
		}
	})
}
