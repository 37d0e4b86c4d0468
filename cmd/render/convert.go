package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/ogx/convert"
)

// convertToOGX prints the documents of in with every LlamaStackDistribution
// replaced by its OGXServer (pkg/kinds/ogx/convert) and every other document
// as it was, so that a file of a GitOps repository is converted in one
// commit. What has no counterpart is a comment above the OGXServer and a
// warning on stderr.
func convertToOGX(in io.Reader, out, stderr io.Writer, opts convert.Options) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var docs []string
	converted := 0
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		gvk := u.GroupVersionKind()
		if gvk != llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind) {
			docs = append(docs, strings.TrimRight(strings.TrimPrefix(string(doc), "---\n"), "\n")+"\n")
			continue
		}
		old := &llamav1alpha1.LlamaStackDistribution{}
		if err := sigsyaml.UnmarshalStrict(doc, old); err != nil {
			return fmt.Errorf("document %d (LlamaStackDistribution %s): %w", n, u.GetName(), err)
		}
		if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); !set {
			old.Spec.Replicas = 1 // the CRD's default
		}
		cr, notes := convert.Convert(old, opts)
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cr)
		if err != nil {
			return err
		}
		delete(obj, "status")
		unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
		b, err := sigsyaml.Marshal(obj)
		if err != nil {
			return err
		}
		var head strings.Builder
		fmt.Fprintf(&head, "# Converted from LlamaStackDistribution %s by render --to-ogxserver.\n", old.Name)
		for _, note := range notes {
			fmt.Fprintf(&head, "# %s\n", note)
			fmt.Fprintf(stderr, "warning: LlamaStackDistribution %s: %s\n", old.Name, note)
		}
		docs = append(docs, head.String()+string(b))
		converted++
	}
	if converted == 0 {
		return errors.New("the input holds no LlamaStackDistribution to convert")
	}
	_, err := io.WriteString(out, strings.Join(docs, "---\n"))
	return err
}
