package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/render"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/switchover"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/watches"
)

// preflightCommand is `manager preflight`: it reads the cluster of
// KUBECONFIG and prints, per CR of the kinds the operator serves, what the
// operator will do with each object when it starts (docs/switching.md). It
// changes nothing: it reads, and asks the API server what a takeover would
// make of each workload with a dry run (dryRun=All), which stores nothing.
func preflightCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	operatorNS := fs.String("operator-namespace", "ai-stack-operator-system", "the namespace the operator will run in (its settings ConfigMap)")
	settingsCM := fs.String("settings-configmap", "ai-stack-operator-config", "the operator's settings ConfigMap in --operator-namespace")
	namespace := fs.String("namespace", "", "look at the CRs of this namespace only (default: all)")
	ws, cfg, c, err := clusterCommand(fs, args, stderr, nil)
	if err != nil || c == nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	p := &preflight{c: c, operatorNS: *operatorNS, settingsCM: *settingsCM, namespace: *namespace}
	var metas []release.Meta
	for _, w := range ws {
		m, err := operator.MetaFor(w)
		if err != nil {
			return err
		}
		metas = append(metas, m)
	}
	p.caps = release.NewCapabilityDetector(dc, dc, 0, metas)
	var crs []switchover.CR
	for _, w := range ws {
		got, err := p.kind(context.Background(), w)
		if err != nil {
			return err
		}
		crs = append(crs, got...)
	}
	jobs, err := p.jobs(context.Background())
	if err != nil {
		return err
	}
	return switchover.Write(stdout, append(crs, jobs...))
}

// jobs are the LMEvalJobs that have not ended: a job the upstream operator
// runs is not handed over in flight (its pod runs upstream's driver, which
// reports to upstream's operator); the others are kept as they are.
func (p *preflight) jobs(ctx context.Context) ([]switchover.CR, error) {
	list := &lmv1alpha1.LMEvalJobList{}
	if _, err := crsOf(ctx, p.c, list, lmv1alpha1.Kind, p.namespace); err != nil {
		return nil, err
	}
	var out []switchover.CR
	for _, j := range list.Items {
		if problem := switchover.JobInFlight(string(j.Status.State)); problem != "" {
			out = append(out, switchover.CR{Kind: lmv1alpha1.Kind, Namespace: j.Namespace, Name: j.Name, Problem: problem})
		}
	}
	return out, nil
}

type preflight struct {
	c                      client.Client
	caps                   *release.CapabilityDetector
	operatorNS, settingsCM string
	namespace              string
}

// kind looks at every CR of one kind; a kind whose CRD the cluster does not
// serve has none.
func (p *preflight) kind(ctx context.Context, w watches.Watch) ([]switchover.CR, error) {
	k, err := operator.KindFor(w, operator.Deps{Client: p.c, APIReader: p.c, Capabilities: p.caps.Capabilities, OperatorNamespace: p.operatorNS, SettingsConfigMap: p.settingsCM})
	if err != nil {
		return nil, err
	}
	m := k.Meta()
	items, err := crsOf(ctx, p.c, m.NewList(), m.GVK.Kind, p.namespace)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	chart, err := charts.Load(w.Chart)
	if err != nil {
		return nil, err
	}
	var out []switchover.CR
	for _, obj := range items {
		obj.GetObjectKind().SetGroupVersionKind(m.GVK)
		cr := switchover.CR{Kind: m.GVK.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
		for _, f := range obj.GetFinalizers() {
			if f != release.Finalizer {
				cr.Finalizers = append(cr.Finalizers, f)
			}
		}
		if !obj.GetDeletionTimestamp().IsZero() {
			cr.Problem = "being deleted"
			out = append(out, cr)
			continue
		}
		// A CR that cannot be looked at is said, and the others still are.
		manifest, err := p.render(ctx, k, chart, obj)
		var f *status.Failure
		switch {
		case errors.As(err, &f):
			cr.Problem = f.Error()
		case err != nil:
			cr.Problem = "could not be rendered: " + err.Error()
		default:
			if cr.Objects, err = p.objects(ctx, m, chart, obj, manifest); err != nil {
				cr.Problem = "could not be read: " + err.Error()
			}
		}
		out = append(out, cr)
	}
	return out, nil
}

// render is what the reconciler renders for the CR: the kind's Gather (which
// reads only), its values, the embedded chart with the cluster's
// capabilities, the guard.
func (p *preflight) render(ctx context.Context, k release.Registered, chart *charts.Chart, obj client.Object) (string, error) {
	in, err := k.Gather(ctx, obj)
	if err != nil {
		return "", err
	}
	vals, err := k.Values(obj, in)
	if err != nil {
		return "", err
	}
	hc, err := p.caps.HelmCapabilities()
	if err != nil {
		return "", err
	}
	caps, err := p.caps.Capabilities()
	if err != nil {
		return "", err
	}
	m := k.Meta()
	manifest, err := render.Render(chart.Chart, vals, render.Options{
		ReleaseName: naming.ReleaseName(m.ReleasePrefix, obj.GetNamespace(), obj.GetName()),
		Namespace:   obj.GetNamespace(),
		KubeVersion: hc.KubeVersion.Version,
		APIVersions: caps.APIVersions(),
	})
	if err != nil {
		return "", err
	}
	if _, err := guard.Check(manifest, guard.Policy{Namespace: obj.GetNamespace(), Kinds: chart.Kinds}); err != nil {
		return "", err
	}
	return manifest, nil
}

// objects classifies each rendered object against the live one, then lists
// the objects the CR controls that the render does not hold.
func (p *preflight) objects(ctx context.Context, m release.Meta, chart *charts.Chart, obj client.Object, manifest string) ([]switchover.Object, error) {
	own := release.OwnershipOf(m, obj)
	rendered := map[string]bool{}
	var out []switchover.Object
	var lives []*unstructured.Unstructured
	for _, doc := range releaseutil.SplitManifests(manifest) {
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte(doc), &u.Object); err != nil || len(u.Object) == 0 {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(obj.GetNamespace())
		}
		kind := u.GetKind()
		rendered[kind+"/"+u.GetName()] = true
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		err := p.c.Get(ctx, client.ObjectKeyFromObject(u), live)
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return nil, fmt.Errorf("read %s %s/%s: %w", kind, u.GetNamespace(), u.GetName(), err)
		}
		action, note := switchover.Classify(own, kind, live)
		o := switchover.Object{Kind: kind, Name: u.GetName(), Action: action, Note: note}
		if action == switchover.TakeOver && switchover.RollsOut(kind) {
			after, err := p.dryRunTakeOver(ctx, own, u, live)
			if err != nil {
				return nil, err
			}
			o.Rollout = switchover.TemplateChanges(live, after)
		}
		out = append(out, o)
		lives = append(lives, live)
	}
	switchover.TakeOverMountedClaims(out, lives)
	left, err := p.left(ctx, chart, obj, own, rendered)
	if err != nil {
		return nil, err
	}
	return append(out, left...), nil
}

// dryRunTakeOver asks the API server what the takeover's patch (the
// rendered object and the operator's marks, merged into the live one) makes
// of the object, storing nothing.
func (p *preflight) dryRunTakeOver(ctx context.Context, own guard.Ownership, rendered, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := rendered.DeepCopy()
	labels, annotations := own.TakeOverMarks()
	u.SetLabels(mergedMap(u.GetLabels(), labels))
	if len(annotations) > 0 {
		u.SetAnnotations(mergedMap(u.GetAnnotations(), annotations))
	}
	u.SetResourceVersion(live.GetResourceVersion())
	switchover.ClearExclusive(u)
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	after := live.DeepCopy()
	if err := p.c.Patch(ctx, after, client.RawPatch(types.MergePatchType, body), client.DryRunAll); err != nil {
		return nil, fmt.Errorf("dry run of the takeover of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return after, nil
}

// left are the objects in the CR's namespace, of the kinds the chart
// renders, that the CR controls and the render does not hold.
func (p *preflight) left(ctx context.Context, chart *charts.Chart, obj client.Object, own guard.Ownership, rendered map[string]bool) ([]switchover.Object, error) {
	var out []switchover.Object
	// The chart's kinds, and the namespaced RBAC kinds the upstream
	// operators write for a CR (EvalHub's RoleBindings) that this operator
	// writes outside its charts under names of its own.
	kinds := slices.Clone(chart.Kinds)
	for _, gk := range []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "Role"}, {Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}} {
		if !slices.Contains(kinds, gk) {
			kinds = append(kinds, gk)
		}
	}
	for _, gk := range kinds {
		mapping, err := p.c.RESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue // not served here
		}
		if err != nil {
			return nil, err
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(gk.Kind + "List"))
		if err := p.c.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("list %s in %s: %w", gk.Kind, obj.GetNamespace(), err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			if rendered[gk.Kind+"/"+item.GetName()] || !controlledBy(item, obj.GetUID()) {
				continue
			}
			if own.Check("", item.GetLabels(), item.GetAnnotations(), item.GetOwnerReferences()) == nil {
				continue // the operator's: it deletes what it no longer renders
			}
			out = append(out, switchover.Object{Kind: gk.Kind, Name: item.GetName(), Action: switchover.Left, Note: switchover.LeftNote(gk.Kind)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func controlledBy(u *unstructured.Unstructured, uid types.UID) bool {
	c := metav1.GetControllerOfNoCopy(u)
	return c != nil && c.UID == uid
}

func mergedMap(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// clusterCommand parses the flags of a command that reads the cluster
// (with --watches-file) and returns the kinds, the configuration and a
// client; a nil client without error: -h was asked. checkArgs checks the
// arguments after the flags, before anything is read; nil: none are taken.
func clusterCommand(fs *flag.FlagSet, args []string, stderr io.Writer, checkArgs func([]string) error) ([]watches.Watch, *rest.Config, client.Client, error) {
	fs.SetOutput(stderr)
	watchesFile := fs.String("watches-file", "", "a watches file of reconcile settings per kind (reconcilePeriod, maxReleaseHistory, maxConcurrentReconciles), for those who tune a kind or serve a subset; empty: every kind with the defaults")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, nil, nil
		}
		return nil, nil, nil, errUsage
	}
	switch {
	case checkArgs != nil:
		if err := checkArgs(fs.Args()); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
			return nil, nil, nil, errUsage
		}
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s takes no arguments, got %q\n", fs.Name(), fs.Args())
		return nil, nil, nil, errUsage
	}
	ws, err := operator.Watches(*watchesFile)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kubernetes config: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return nil, nil, nil, err
	}
	return ws, cfg, c, nil
}

// crsOf lists the objects of a kind (in namespace ns, "" for all) into list
// and returns them; none, without error, when the cluster does not serve the
// kind (its CRD is not installed).
func crsOf(ctx context.Context, c client.Client, list client.ObjectList, kind, ns string) ([]client.Object, error) {
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		out = append(out, item.(client.Object))
	}
	return out, nil
}
