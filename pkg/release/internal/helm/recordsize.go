package helm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// RecordCheck returns the gate's check of the record an install or upgrade
// of these values would store: a release whose record the API server cannot
// hold (MaxRecordBytes) is an invalid spec before anything is applied,
// naming the CR's largest fields. Helm would apply the objects, fail to
// store the record, say nothing, and install them again on every reconcile.
func RecordCheck(owner client.Object, relName string, c *chart.Chart, vals map[string]any) func(manifest string) error {
	return func(manifest string) error {
		rls := &helmrelease.Release{
			Name: relName, Namespace: owner.GetNamespace(), Chart: c, Config: vals, Manifest: manifest, Version: 1,
			Info: &helmrelease.Info{Status: rcommon.StatusDeployed, Description: "Upgrade complete"},
		}
		raw, err := json.Marshal(rls)
		if err != nil {
			return err
		}
		// gzip grows what it cannot compress by a few bytes per 32 KiB block:
		// a record whose JSON fits with room for that needs no compressing.
		if bound := (len(raw) + len(raw)/1000 + 64 + 2) / 3 * 4; bound <= MaxRecordBytes {
			return nil
		}
		data, err := encodeRecord(rls)
		if err != nil {
			return err
		}
		if len(data) <= MaxRecordBytes {
			return nil
		}
		largest := largestFields(owner, 3)
		f := &status.Failure{Reason: status.ReasonInvalidSpec, Message: fmt.Sprintf("the release record of this resource would be %d bytes, over the %d bytes a ConfigMap holds, and nothing was applied: make the largest fields smaller (%s)", len(data), MaxRecordBytes, strings.Join(largest, ", "))}
		if len(largest) > 0 {
			f.Field = strings.Fields(largest[0])[0]
		}
		return f
	}
}

// largestFields are the n largest values under the object's spec, as
// "path (N bytes)", largest first.
func largestFields(obj client.Object, n int) []string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	type field struct {
		path string
		size int
	}
	var fields []field
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range t {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		default:
			b, _ := json.Marshal(t)
			fields = append(fields, field{path, len(b)})
		}
	}
	walk("spec", u["spec"])
	sort.Slice(fields, func(i, j int) bool {
		if fields[i].size != fields[j].size {
			return fields[i].size > fields[j].size
		}
		return fields[i].path < fields[j].path
	})
	var out []string
	for i := 0; i < len(fields) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s (%d bytes)", fields[i].path, fields[i].size))
	}
	return out
}
