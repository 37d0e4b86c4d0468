package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/llamastack"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/kinds/trustyai"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/subset"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// Checker tells whether the CRs of some namespaces have converged.
type Checker struct {
	Client    client.Client
	Clientset kubernetes.Interface
	// OperatorNamespace holds the release records.
	OperatorNamespace string
	// MaxHistory is the most revisions a release may keep (the watches settings).
	MaxHistory int
	// WantReady requires every CR's phase to be Ready (it cannot be on a
	// control plane without nodes); otherwise any phase at the current
	// generation with the release deployed will do.
	WantReady bool
}

// owned are the namespaced kinds the charts render, looked through for
// objects no release or CR accounts for.
var owned = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
}

type cr struct {
	kind, prefix, ns, name string
	uid                    types.UID
	settled                string // "" when settled, else why not
	deleting               bool
}

// Converged returns nil when, in every namespace given: each CR's status is
// at its generation (and Ready with WantReady); its release has exactly one
// deployed revision, none pending, at most MaxHistory; every object of that
// revision's manifest exists and holds every field the manifest renders; no
// object labelled as the operator's is left that no release renders and no
// live CR controls; and no release record is left whose CR is gone.
// Otherwise it returns every problem found, one per line.
func (k Checker) Converged(ctx context.Context, namespaces ...string) error {
	var crs []cr
	for _, ns := range namespaces {
		found, err := k.crs(ctx, ns)
		if err != nil {
			return err
		}
		crs = append(crs, found...)
	}
	var problems []string
	expected := map[string]bool{} // "ns/Kind/name" of every rendered object
	live := map[types.UID]bool{}
	for _, c := range crs {
		live[c.uid] = true
		if c.deleting {
			problems = append(problems, fmt.Sprintf("%s %s/%s: still being deleted", c.kind, c.ns, c.name))
			continue
		}
		if c.settled != "" {
			problems = append(problems, fmt.Sprintf("%s %s/%s: %s", c.kind, c.ns, c.name, c.settled))
		}
		ps, err := k.release(ctx, c, expected)
		if err != nil {
			return err
		}
		problems = append(problems, ps...)
	}
	ps, err := k.leftovers(ctx, namespaces, expected, live)
	if err != nil {
		return err
	}
	problems = append(problems, ps...)
	if len(problems) > 0 {
		sort.Strings(problems)
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func (k Checker) crs(ctx context.Context, ns string) ([]cr, error) {
	var out []cr
	llsds := &llamav1alpha1.LlamaStackDistributionList{}
	if err := k.Client.List(ctx, llsds, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for _, o := range llsds.Items {
		c := cr{kind: "LlamaStackDistribution", prefix: llamastack.ReleasePrefix, ns: ns, name: o.Name, uid: o.UID, deleting: o.DeletionTimestamp != nil}
		c.settled = k.unsettled(o.Generation, o.Status.ObservedGeneration, string(o.Status.Phase), string(llamav1alpha1.PhaseReady))
		// With pods available the server is asked in the background: its
		// answer is part of the status.
		if hc := meta.FindStatusCondition(o.Status.Conditions, llamastack.TypeHealthCheck); c.settled == "" && hc != nil && o.Status.AvailableReplicas > 0 &&
			meta.IsStatusConditionTrue(o.Status.Conditions, "DeploymentReady") && hc.Message == llamastack.HealthCheckPodsNotReady {
			c.settled = "HealthCheck waits for the server's answer"
		}
		out = append(out, c)
	}
	tass := &trustyv1.TrustyAIServiceList{}
	if err := k.Client.List(ctx, tass, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for _, o := range tass.Items {
		c := cr{kind: "TrustyAIService", prefix: trustyai.ReleasePrefix, ns: ns, name: o.Name, uid: o.UID, deleting: o.DeletionTimestamp != nil}
		c.settled = k.unsettled(o.Generation, o.Status.ObservedGeneration, o.Status.Phase, trustyv1.PhaseReady)
		out = append(out, c)
	}
	return out, nil
}

// unsettled says why a CR's status is not settled, "" when it is.
func (k Checker) unsettled(generation, observed int64, phase, ready string) string {
	switch {
	case observed != generation:
		return fmt.Sprintf("status at generation %d of %d", observed, generation)
	case k.WantReady && phase != ready:
		return fmt.Sprintf("phase %q", phase)
	}
	return ""
}

// release checks a CR's release records and the objects of its deployed
// revision, and notes those objects in expected.
func (k Checker) release(ctx context.Context, c cr, expected map[string]bool) ([]string, error) {
	what := fmt.Sprintf("%s %s/%s", c.kind, c.ns, c.name)
	store := framework.NewRecords(k.Clientset, k.OperatorNamespace)
	rels, err := store.Query(map[string]string{"owner": "helm", "name": naming.ReleaseName(c.prefix, c.ns, c.name)})
	if errors.Is(err, framework.ErrReleaseNotFound) {
		return []string{what + ": no release record"}, nil
	}
	if err != nil {
		return nil, err
	}
	var problems []string
	deployed := 0
	var manifest string
	for _, r := range rels {
		switch st := r.Info.Status; {
		case st.IsPending():
			problems = append(problems, fmt.Sprintf("%s: revision %d is %s", what, r.Version, st))
		case st == "deployed":
			deployed++
			manifest = r.Manifest
		}
	}
	if deployed != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d deployed revisions", what, deployed))
	}
	if k.MaxHistory > 0 && len(rels) > k.MaxHistory {
		problems = append(problems, fmt.Sprintf("%s: %d revisions kept, at most %d", what, len(rels), k.MaxHistory))
	}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		want := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &want); err != nil {
			return nil, fmt.Errorf("%s: manifest: %w", what, err)
		}
		if len(want) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: want}
		gvk := u.GroupVersionKind()
		m, err := k.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, err
		}
		ns := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = c.ns
		}
		expected[ns+"/"+gvk.Kind+"/"+u.GetName()] = true
		have := &unstructured.Unstructured{}
		have.SetGroupVersionKind(gvk)
		if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName()}, have); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s %s: %v", what, gvk.Kind, u.GetName(), err))
			continue
		}
		// Both sides as encoding/json decodes them.
		var w, h any
		if err := roundTrip(want, &w); err != nil {
			return nil, err
		}
		if err := roundTrip(have.Object, &h); err != nil {
			return nil, err
		}
		if !subset.Of(w, h) {
			problems = append(problems, fmt.Sprintf("%s: %s %s differs from its release's manifest", what, gvk.Kind, u.GetName()))
		}
	}
	return problems, nil
}

// leftovers finds objects labelled as the operator's that no release renders
// and no live CR controls, and release records whose CR is gone.
func (k Checker) leftovers(ctx context.Context, namespaces []string, expected map[string]bool, live map[types.UID]bool) ([]string, error) {
	var problems []string
	managed := client.MatchingLabels{release.LabelManaged: "true"}
	for _, ns := range namespaces {
		for _, gvk := range owned {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := k.Client.List(ctx, list, client.InNamespace(ns), managed); err != nil {
				return nil, err
			}
			for _, o := range list.Items {
				if expected[ns+"/"+gvk.Kind+"/"+o.Name] {
					continue
				}
				if ref := metav1.GetControllerOf(&o); ref != nil && live[ref.UID] {
					continue // made by the operator beside the release, such as a CA bundle
				}
				problems = append(problems, fmt.Sprintf("leaked %s %s/%s", gvk.Kind, ns, o.Name))
			}
		}
	}
	records := &metav1.PartialObjectMetadataList{}
	records.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	if err := k.Client.List(ctx, records, client.InNamespace(k.OperatorNamespace), client.MatchingLabels{"owner": "helm"}); err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, ns := range namespaces {
		in[ns] = true
	}
	for _, r := range records.Items {
		if in[r.Labels[release.LabelOwnerNamespace]] && !live[types.UID(r.Labels[release.LabelOwnerUID])] {
			problems = append(problems, fmt.Sprintf("leaked release record %s (its %s is gone)", r.Name, r.Labels[release.LabelOwnerKind]))
		}
	}
	return problems, nil
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
