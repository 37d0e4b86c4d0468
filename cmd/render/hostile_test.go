package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	nemov1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/nemoguardrails/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/lmeval"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
)

// payloads are what a hostile CR author puts into a string field.
var payloads = map[string]string{
	"second document":    "x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n  namespace: other\n",
	"flow mapping":       "{a: b, kind: Secret}",
	"alias":              "*ref",
	"tag":                "!!binary aGVsbG8=",
	"line separator":     "x\u2028---\u2028kind: ConfigMap\u2028metadata: {name: injected, namespace: other}",
	"next line":          "x\u0085---\u0085kind: ConfigMap",
	"quote and list":     "\"q\": 1\n- item\n  nested: [",
	"comment and indent": "x # c\n    kind: ConfigMap\n  namespace: other",
	"10 KiB":             strings.Repeat("a", 10*1024),
}

// leaf is a place in the spec a string can go: a string field, an
// int-or-string, a quantity, a []string element, or a map key.
type leaf struct {
	// path of JSON field names; "[]" is the first list element, "{}" a map entry.
	path []string
	// key is true when the map key (not the value) is the leaf.
	key bool
	typ reflect.Type
	// types are the types at each step of path (pointers removed).
	types []reflect.Type
}

func (l leaf) String() string {
	s := strings.Join(l.path, ".")
	if l.key {
		s += "(key)"
	}
	return s
}

var (
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	quantityType    = reflect.TypeOf(resource.Quantity{})
	timeType        = reflect.TypeOf(metav1.Time{})
)

// leaves walks a type and lists every leaf, so that fields added to the API
// are covered without touching this test.
func leaves(t reflect.Type, path []string, types []reflect.Type, seen map[reflect.Type]bool, out *[]leaf) {
	walk(t, path, types, seen, out, false)
}

// walk is leaves; an inline struct shares its parent's step.
func walk(t reflect.Type, path []string, types []reflect.Type, seen map[reflect.Type]bool, out *[]leaf, inline bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !inline {
		types = append(clone2(types), t)
	}
	add := func(p []string, key bool, typ reflect.Type) {
		*out = append(*out, leaf{path: clone(p), key: key, typ: typ, types: clone2(types)})
	}
	switch {
	case t == intOrStringType || t == quantityType:
		add(path, false, t)
		return
	case t == timeType:
		return
	}
	switch t.Kind() {
	case reflect.String:
		add(path, false, t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			add(path, false, t)
			return
		}
		walk(t.Elem(), append(path, "[]"), types, seen, out, false)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			types = append(types, t.Key())
			add(append(path, "{}"), true, t.Key())
			types = types[:len(types)-1]
		}
		walk(t.Elem(), append(path, "{}"), types, seen, out, false)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, inline := jsonName(f)
			if name == "-" || !f.IsExported() {
				continue
			}
			if inline {
				walk(f.Type, path, types, seen, out, true)
				continue
			}
			walk(f.Type, append(path, name), types, seen, out, false)
		}
	}
}

func jsonName(f reflect.StructField) (string, bool) {
	name, inline := jsonInline(f)
	if inline {
		return "", true
	}
	if name == "" {
		return f.Name, false
	}
	return name, false
}

// jsonInline is a field's JSON name, and whether encoding/json inlines it:
// marked inline (",inline", as apimachinery writes it), or an embedded
// struct without a name (k8s.io/api v0.37 tags Volume's VolumeSource and
// the key selectors' LocalObjectReference `json:""`).
func jsonInline(f reflect.StructField) (string, bool) {
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name, strings.Contains(opts, "inline") || (f.Anonymous && name == "")
}

func clone(p []string) []string { return append([]string(nil), p...) }

func clone2(p []reflect.Type) []reflect.Type { return append([]reflect.Type(nil), p...) }

// fill is an ordinary JSON value of a type, with every field Kubernetes
// requires (no omitempty) filled in, so that a leaf's parents are complete.
func fill(t reflect.Type, depth int) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == intOrStringType:
		return int64(1)
	case t == quantityType:
		return "1"
	case t == timeType:
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return "x"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return int64(1)
	case reflect.Bool:
		return false
	case reflect.Slice:
		return []any{}
	case reflect.Map:
		return map[string]any{}
	case reflect.Struct:
		m := map[string]any{}
		if depth > 6 {
			return m
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, inline := jsonInline(f)
			_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if inline {
				if inner, ok := fill(f.Type, depth+1).(map[string]any); ok {
					for k, v := range inner {
						m[k] = v
					}
				}
				continue
			}
			if !f.IsExported() || name == "-" || strings.Contains(opts, "omitempty") || name == "" {
				continue
			}
			if v := fill(f.Type, depth+1); v != nil {
				m[name] = v
			}
		}
		return m
	}
	return nil
}

// set puts value at the leaf's path in a JSON object, creating what is
// missing; list elements and map entries are created as the first one.
func set(obj map[string]any, l leaf, value any) {
	var cur any = obj
	for i, step := range l.path {
		last := i == len(l.path)-1
		switch step {
		case "[]":
			continue // handled by the parent, which created a one-element list
		case "{}":
			continue
		}
		m := cur.(map[string]any)
		nextStep := ""
		if i+1 < len(l.path) {
			nextStep = l.path[i+1]
		}
		switch {
		case nextStep == "{}" && l.key && i+2 == len(l.path):
			m[step] = map[string]any{fmt.Sprint(value): "1"}
			return
		case nextStep == "{}":
			child, _ := m[step].(map[string]any)
			if child == nil {
				child = map[string]any{}
				m[step] = child
			}
			if i+2 == len(l.path) {
				child["k"] = value
				return
			}
			inner, _ := child["k"].(map[string]any)
			if inner == nil {
				inner = map[string]any{}
				child["k"] = inner
			}
			cur = inner
		case nextStep == "[]":
			list, _ := m[step].([]any)
			if i+2 == len(l.path) {
				m[step] = []any{value}
				return
			}
			if len(list) == 0 {
				elem, _ := fill(l.types[i+1], 0).(map[string]any)
				if elem == nil {
					elem = map[string]any{}
				}
				list = []any{elem}
				m[step] = list
			}
			cur = list[0]
		case last:
			m[step] = value
			return
		default:
			child, _ := m[step].(map[string]any)
			if child == nil {
				child, _ = fill(l.types[i], 0).(map[string]any)
				if child == nil {
					child = map[string]any{}
				}
				m[step] = child
			}
			cur = child
		}
	}
}

// llsdBase is a CR that renders; each case adds one leaf to it.
func llsdBase() map[string]any {
	return map[string]any{
		"apiVersion": "llamastack.io/v1alpha1", "kind": "LlamaStackDistribution",
		"metadata": map[string]any{"name": "target", "namespace": "tenant"},
		"spec": map[string]any{"server": map[string]any{
			"distribution": map[string]any{"name": "starter"},
		}},
	}
}

// benign are ordinary values to try at a leaf, so that the leaf's path
// renders at all (a volume needs its name, a mount path must be absolute).
func llsdBenign(l leaf) []any {
	return typedBenign(l, "x", "/x", "sqlite", "remote::x", "0.7.1")
}

// withSiblings fills the fields Kubernetes requires next to a leaf, so that
// a benign value renders (names of list entries, volume sources).
func llsdSiblings(obj map[string]any, l leaf) {
	p := strings.Join(l.path, ".")
	spec := obj["spec"].(map[string]any)
	server := spec["server"].(map[string]any)
	switch {
	case strings.HasPrefix(p, "spec.server.config."):
		server["config"] = map[string]any{"providers": map[string]any{"inference": []any{map[string]any{"providerId": "p", "providerType": "remote::vllm"}}}}
	case strings.HasPrefix(p, "spec.server.distribution."):
		server["distribution"] = map[string]any{}
	case strings.HasPrefix(p, "spec.server.podOverrides.volumeMounts."):
		server["podOverrides"] = map[string]any{"volumes": []any{map[string]any{"name": "x", "emptyDir": map[string]any{}}}}
	}
}

// hostileKind is what TestHostileStrings needs of a kind.
type hostileKind struct {
	name  string
	chart string
	spec  reflect.Type
	// base is a CR that renders; each case adds one leaf to it.
	base func() map[string]any
	// benign are ordinary values to try at a leaf, so that the leaf's path
	// renders at all.
	benign func(leaf) []any
	// siblings fills the fields Kubernetes requires next to a leaf.
	siblings func(map[string]any, leaf)
	// minLeaves guards the walk; must are leaves that have to render.
	minLeaves int
	must      []string
	// contentNamed matches the names that carry a hash of the object's
	// content (its first group is kept): a value may change such a name,
	// not the set of objects.
	contentNamed *regexp.Regexp
	// render renders a CR of a kind outside watches.yaml (nil: the
	// render command's own path).
	render func(*unstructured.Unstructured) (string, error)
}

// TestHostileStrings walks every leaf of every kind's API and puts each
// payload there (alone, and after an ordinary value): each case is refused
// (by admission as on the API server, or by the translation), or it renders
// exactly the objects the ordinary value renders, all in the CR's namespace
// and of the chart's kinds.
func TestHostileStrings(t *testing.T) {
	kinds := []hostileKind{{
		name: "LlamaStackDistribution", chart: "llama-stack-distribution",
		spec: reflect.TypeOf(llamav1alpha1.LlamaStackDistributionSpec{}),
		base: llsdBase, benign: llsdBenign, siblings: llsdSiblings, minLeaves: 100,
		must: []string{
			"spec.server.containerSpec.name", "spec.server.podOverrides.serviceAccountName",
			"spec.server.podDisruptionBudget.minAvailable", "spec.server.podDisruptionBudget.maxUnavailable",
			"spec.server.userConfig.configMapName", "spec.server.distribution.image",
			"spec.server.containerSpec.env.[].value", "spec.server.containerSpec.command.[]", "spec.server.containerSpec.args.[]",
			"spec.server.storage.mountPath", "spec.network.allowedFrom.namespaces.[]", "spec.network.allowedFrom.labels.[]",
			"spec.server.podOverrides.volumes.[].name", "spec.server.containerSpec.resources.limits.{}(key)",
			"spec.server.config.serverVersion",
		},
	}, {
		name: "OGXServer", chart: "ogx-server",
		spec: reflect.TypeOf(ogxv1beta1.OGXServerSpec{}),
		base: ogxBase, benign: ogxBenign, siblings: ogxSiblings, minLeaves: 300,
		must: []string{
			"spec.distribution.image", "spec.workload.overrides.env.[].value", "spec.workload.overrides.command.[]",
			"spec.workload.overrides.args.[]", "spec.workload.storage.mountPath", "spec.network.externalAccess.hostname",
			"spec.overrideConfig.name", "spec.overrideConfig.key", "spec.resources.models.[].name",
			"spec.providers.inference.remote.vllm.[].endpoint", "spec.providers.inference.remote.vllm.[].id",
			"spec.providers.inference.remote.custom.[].type", "spec.workload.overrides.serviceAccountName",
		},
		// The generated configuration's ConfigMap is named after its content.
		contentNamed: regexp.MustCompile(`^(ConfigMap/.*-config-)[0-9a-f]{16}$`),
	}, {
		name: "TrustyAIService", chart: "trustyai-service",
		spec: reflect.TypeOf(trustyv1.TrustyAIServiceSpec{}),
		base: tasBase, benign: tasBenign, siblings: tasSiblings, minLeaves: 7,
		must: []string{
			"spec.storage.format", "spec.storage.folder", "spec.storage.size", "spec.storage.databaseConfigurations",
			"spec.data.filename", "spec.data.format", "spec.metrics.schedule",
		},
	}, {
		name: "LMEvalJob", chart: lmeval.Chart,
		spec: reflect.TypeOf(lmv1alpha1.LMEvalJobSpec{}),
		base: lmevalBase, benign: lmevalBenign, siblings: lmevalSiblings, minLeaves: 300, render: lmevalRender(t),
		must: []string{
			"spec.modelArgs.[].value", "spec.taskList.taskNames.[]", "spec.taskList.taskRecipes.[].card.name",
			"spec.taskList.customTasks.source.git.url", "spec.taskList.customTasks.source.git.path",
			"spec.systemInstruction", "spec.chatTemplate.name", "spec.limit", "spec.batchSize",
			"spec.pod.container.env.[].value", "spec.outputs.pvcName", "spec.outputs.oci.repository",
			"spec.offline.storage.s3.path", "spec.pod.sideCars.[].image",
		},
	}, {
		name: "NemoGuardrails", chart: "nemo-guardrails",
		spec: reflect.TypeOf(nemov1alpha1.NemoGuardrailsSpec{}),
		base: nemoBase, benign: nemoBenign, minLeaves: 90,
		siblings: func(map[string]any, leaf) {},
		must: []string{
			"spec.nemoConfigs.[].name", "spec.nemoConfigs.[].configMaps.[]", "spec.env.[].value", "spec.env.[].name",
			"spec.caBundleConfig.configMapName", "spec.template.pod.nodeSelector.{}(key)", "spec.template.pod.tolerations.[].key",
		},
	}, {
		name: "EvalHub", chart: "eval-hub",
		spec: reflect.TypeOf(evalhubv1.EvalHubSpec{}),
		base: evalHubBase, benign: evalHubBenign, minLeaves: 50,
		siblings: evalHubSiblings,
		must: []string{
			"spec.env.[].value", "spec.env.[].name", "spec.mcp.env.[].value", "spec.mcp.image", "spec.mcp.authSecret",
			"spec.database.secret", "spec.otel.exporterEndpoint", "spec.otel.serviceName", "spec.otel.samplingRatio",
		},
	}}
	walked := map[string]string{}
	for _, k := range kinds {
		walked[k.name] = k.chart
	}
	served := map[string]string{}
	for _, k := range operator.Served() {
		served[k.GVK.Kind] = k.Chart
	}
	if !reflect.DeepEqual(served, walked) {
		t.Fatalf("the walk covers %v (kind: chart); the operator serves %v: add a hostileKind for a new kind", walked, served)
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { hostileStrings(t, k) })
	}
}

// lmevalBase is upstream's sample job.
func lmevalBase() map[string]any {
	return map[string]any{
		"apiVersion": "trustyai.opendatahub.io/v1alpha1", "kind": "LMEvalJob",
		"metadata": map[string]any{"name": "target", "namespace": "tenant"},
		"spec": map[string]any{
			"model":     "hf",
			"modelArgs": []any{map[string]any{"name": "pretrained", "value": "EleutherAI/pythia-70m"}},
			"taskList":  map[string]any{"taskNames": []any{"unfair_tos"}},
			"limit":     "5",
		},
	}
}

func lmevalBenign(l leaf) []any {
	return typedBenign(l, "x", "/x", "1Gi", "https://github.com/o/r", "abc1234", "{\"loader\": {}, \"__type__\": \"task\", \"input_fields\": {}, \"input_format\": \"\", \"output_format\": \"\"}")
}

// typedBenign is an ordinary value of a leaf's type: an int-or-string or a
// quantity; strings for the rest.
func typedBenign(l leaf, strings ...any) []any {
	switch l.typ {
	case intOrStringType:
		return []any{"50%"}
	case quantityType:
		return []any{"1Gi"}
	}
	return strings
}

// lmevalSiblings fills what a leaf needs next to it.
func lmevalSiblings(obj map[string]any, l leaf) {
	p := strings.Join(l.path, ".")
	spec := obj["spec"].(map[string]any)
	if strings.HasPrefix(p, "spec.pod.container.volumeMounts.") {
		spec["pod"] = map[string]any{"volumes": []any{map[string]any{"name": "x", "emptyDir": map[string]any{}}}}
	}
}

// lmevalRender renders a job as the LMEvalJob controller does: its checks,
// then its chart with the kind's values.
func lmevalRender(t *testing.T) func(*unstructured.Unstructured) (string, error) {
	c, err := charts.Load(lmeval.Chart)
	if err != nil {
		t.Fatal(err)
	}
	s, err := lmeval.ParseSettings(nil, nil, nil, nil, "driver:v1")
	if err != nil {
		t.Fatal(err)
	}
	s.AllowOnline, s.AllowCodeExecution = true, true
	return func(u *unstructured.Unstructured) (string, error) {
		job := &lmv1alpha1.LMEvalJob{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, job, true); err != nil {
			return "", err
		}
		if msg := lmeval.Validate(&job.Spec); msg != "" {
			return "", errors.New(msg)
		}
		vals, err := lmeval.Values(job, s, lmeval.PermitsFor(&job.Spec, s), map[string]string{"ai-stack-operator.io/managed": "true"}, lmeval.MergeCABundle("-----BEGIN CERTIFICATE-----"), nil)
		if err != nil {
			return "", err
		}
		return render.Render(c.Chart, vals, render.Options{ReleaseName: job.Name, Namespace: job.Namespace})
	}
}

// ogxBase is the smallest OGXServer: a named distribution, the image's own
// configuration.
func ogxBase() map[string]any {
	return map[string]any{
		"apiVersion": "ogx.io/v1beta1", "kind": "OGXServer",
		"metadata": map[string]any{"name": "target", "namespace": "tenant"},
		"spec":     map[string]any{"distribution": map[string]any{"name": "starter"}},
	}
}

func ogxBenign(l leaf) []any {
	return typedBenign(l, "x", "/x", "http://x", "remote::x", "sqlite", "llm")
}

// ogxSiblings fills the fields required next to a leaf.
func ogxSiblings(obj map[string]any, l leaf) {
	p := strings.Join(l.path, ".")
	spec := obj["spec"].(map[string]any)
	switch {
	case strings.HasPrefix(p, "spec.distribution."):
		spec["distribution"] = map[string]any{}
	case strings.HasPrefix(p, "spec.overrideConfig."):
		spec["overrideConfig"] = map[string]any{"name": "x", "key": "config.yaml"}
	case strings.HasPrefix(p, "spec.workload.overrides.volumeMounts."):
		spec["workload"] = map[string]any{"overrides": map[string]any{"volumes": []any{map[string]any{"name": "x", "emptyDir": map[string]any{}}}}}
	case strings.HasPrefix(p, "spec.providers.inference.remote.custom."):
		spec["providers"] = map[string]any{"inference": map[string]any{"remote": map[string]any{"custom": []any{map[string]any{"type": "remote::x"}}}}}
	}
}

// tasBase is upstream's v1 sample.
func tasBase() map[string]any {
	return map[string]any{
		"apiVersion": "trustyai.opendatahub.io/v1", "kind": "TrustyAIService",
		"metadata": map[string]any{"name": "target", "namespace": "tenant"},
		"spec": map[string]any{
			"storage": map[string]any{"format": "PVC", "folder": "/inputs", "size": "1Gi"},
			"data":    map[string]any{"filename": "data.csv", "format": "CSV"},
			"metrics": map[string]any{"schedule": "5s"},
		},
	}
}

func tasBenign(leaf) []any { return []any{"x", "/x", "1Gi", "5s", "PVC"} }

// tasSiblings: the database Secret matters in DATABASE mode.
func tasSiblings(obj map[string]any, l leaf) {
	if strings.Join(l.path, ".") == "spec.storage.databaseConfigurations" {
		obj["spec"].(map[string]any)["storage"] = map[string]any{"format": "DATABASE"}
	}
}

func hostileStrings(t *testing.T, k hostileKind) {
	// The guard is off: what is checked here is that the chart and the
	// translation keep every string in its place on their own. (The guard,
	// tested in pkg/guard and against the API server, is the second line.)
	r, err := newRenderer(renderOptions{namespace: "default", operatorNamespace: "ops", apiVersions: []string{"monitoring.coreos.com/v1"}, openshift: true, unguarded: true})
	if err != nil {
		t.Fatal(err)
	}
	c := r.charts[k.chart]
	if c == nil {
		if c, err = charts.Load(k.chart); err != nil {
			t.Fatal(err)
		}
	}
	render := r.render
	if k.render != nil {
		render = k.render
	}
	policy := guard.Policy{Namespace: "tenant", Kinds: c.Kinds}

	var all []leaf
	leaves(k.spec, []string{"spec"}, nil, map[reflect.Type]bool{}, &all)
	if len(all) < k.minLeaves {
		t.Fatalf("only %d leaves found: the walk is broken", len(all))
	}

	renderWith := func(l leaf, value any) (string, []guard.Object, error) {
		obj := k.base()
		k.siblings(obj, l)
		set(obj, l, value)
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
		manifest, err := render(u)
		if err != nil {
			return "", nil, err
		}
		objs, err := guard.Check(manifest, policy)
		if err != nil {
			t.Errorf("%s = %.40q renders what the guard refuses: %v", l, value, err)
		}
		return manifest, objs, err
	}
	names := func(objs []guard.Object) string {
		s := make([]string, 0, len(objs))
		for _, o := range objs {
			if o.Namespace != "" && o.Namespace != "tenant" {
				t.Errorf("object %s outside the namespace", o)
			}
			id := o.Kind + "/" + o.Name
			if k.contentNamed != nil {
				id = k.contentNamed.ReplaceAllString(id, "${1}<hash>")
			}
			s = append(s, id)
		}
		sort.Strings(s)
		return strings.Join(s, " ")
	}

	rendered, cases := 0, 0
	renderedLeaves := map[string]bool{}
	for _, l := range all {
		var want string
		var prefix string
		var lastErr error
		for _, b := range k.benign(l) {
			_, objs, err := renderWith(l, b)
			if err == nil {
				want, prefix = names(objs), fmt.Sprint(b)
				break
			}
			lastErr = err
		}
		if want == "" && os.Getenv("HOSTILE_VERBOSE") != "" {
			t.Logf("%s does not render with an ordinary value: %v", l, lastErr)
		}
		if want != "" {
			rendered++
			renderedLeaves[l.String()] = true
		}
		for pname, p := range payloads {
			for _, v := range []string{p, prefix + p} {
				cases++
				_, objs, err := renderWith(l, v)
				if err != nil {
					continue // refused: nothing is applied
				}
				if got := names(objs); want != "" && got != want {
					t.Errorf("%s with %s renders %q; the ordinary value renders %q", l, pname, got, want)
				}
			}
		}
	}
	t.Logf("%d leaves (%d render with an ordinary value), %d hostile cases", len(all), rendered, cases)
	for _, must := range k.must {
		if !renderedLeaves[must] {
			t.Errorf("%s never rendered with an ordinary value: the test does not reach it", must)
		}
	}
	if rendered*2 < len(all) {
		t.Errorf("only %d of %d leaves render with an ordinary value", rendered, len(all))
	}
}

// nemoBase is a server of one configuration, with auth.
func nemoBase() map[string]any {
	return map[string]any{
		"apiVersion": "trustyai.opendatahub.io/v1alpha1", "kind": "NemoGuardrails",
		"metadata": map[string]any{"name": "target", "namespace": "tenant", "annotations": map[string]any{"security.opendatahub.io/enable-auth": "true"}},
		"spec": map[string]any{
			"nemoConfigs": []any{map[string]any{"name": "safety", "configMaps": []any{"nemo-config"}}},
		},
	}
}

func nemoBenign(l leaf) []any { return typedBenign(l, "x", "1Gi") }

// evalHubBase is a hub with SQLite and its MCP server.
func evalHubBase() map[string]any {
	return map[string]any{
		"apiVersion": "trustyai.opendatahub.io/v1", "kind": "EvalHub",
		"metadata": map[string]any{"name": "target", "namespace": "tenant"},
		"spec": map[string]any{
			"database": map[string]any{"type": "sqlite"},
			"mcp":      map[string]any{"enabled": true},
		},
	}
}

func evalHubBenign(l leaf) []any { return typedBenign(l, "x", "1Gi", "0.5", "30s", "postgresql") }

// evalHubSiblings: the database's Secret renders with PostgreSQL only, the
// MCP server's fields with MCP on.
func evalHubSiblings(obj map[string]any, l leaf) {
	p := strings.Join(l.path, ".")
	spec := obj["spec"].(map[string]any)
	switch {
	case strings.HasPrefix(p, "spec.database."):
		spec["database"] = map[string]any{"type": "postgresql", "secret": "db"}
	case strings.HasPrefix(p, "spec.mcp."):
		spec["mcp"] = map[string]any{"enabled": true}
	}
}
