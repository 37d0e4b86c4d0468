package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// switchBackCommand is `manager switch-back`: the way back to the upstream
// operators (docs/switching.md), run once this operator is stopped and
// before the upstream one starts. Per CR of every kind it serves: the
// operator's finalizer is removed (nothing else would, and a CR deleted
// later would wait for ever), and the CR's objects get the labels the
// upstream operator's cache selects by, so that it finds them and patches
// them in place (it does so for objects whose owner reference is the CR,
// which every one of them keeps but the claims, which it never patches).
// What the operator wrote outside the CR's namespace for it (a proxy's
// ClusterRoleBinding, an EvalHub's grants) is deleted: the upstream operator
// writes its own, under its own names. Claims, objects and their data stay.
func switchBackCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("switch-back", flag.ContinueOnError)
	operatorNS := fs.String("operator-namespace", "ai-stack-operator-system", "the namespace this operator ran in (its leader election Lease)")
	dryRun := fs.Bool("dry-run", false, "print what would be changed, change nothing")
	ws, _, c, err := clusterCommand(fs, args, stderr, nil)
	if err != nil || c == nil {
		return err
	}
	ctx := context.Background()
	if err := stopped(ctx, c, *operatorNS); err != nil {
		return err
	}
	sb := &switchBack{c: c, out: stdout, dryRun: *dryRun}
	for _, w := range ws {
		m, err := operator.MetaFor(w)
		if err != nil {
			return err
		}
		chart, err := charts.Load(w.Chart)
		if err != nil {
			return err
		}
		if err := sb.kind(ctx, m, chart); err != nil {
			return err
		}
	}
	if sb.crs == 0 {
		fmt.Fprintln(stdout, "no custom resource of the kinds this operator serves: nothing to hand back")
	}
	return nil
}

// stopped refuses while this operator holds its leader election Lease: it
// would put its finalizer and its labels back.
func stopped(ctx context.Context, c client.Client, ns string) error {
	lease := &coordinationv1.Lease{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator.LeaderElectionID}, lease)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read the operator's Lease %s/%s: %w", ns, operator.LeaderElectionID, err)
	}
	s := lease.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return nil
	}
	if until := s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second); time.Now().Before(until) {
		return fmt.Errorf("ai-stack-operator still runs (%s holds Lease %s/%s, renewed %s): stop it first (scale its Deployment to 0), then run switch-back again", *s.HolderIdentity, ns, operator.LeaderElectionID, s.RenewTime.UTC().Format(time.RFC3339))
	}
	return nil
}

type switchBack struct {
	c      client.Client
	out    io.Writer
	dryRun bool
	crs    int
}

func (sb *switchBack) say(format string, args ...any) {
	if sb.dryRun {
		format = "(dry run) " + format
	}
	fmt.Fprintf(sb.out, format+"\n", args...)
}

// kind hands back every CR of one kind, then deletes what the operator wrote
// outside the CRs' namespaces for the kind.
func (sb *switchBack) kind(ctx context.Context, m release.Meta, chart *charts.Chart) error {
	items, err := crsOf(ctx, sb.c, m.NewList(), m.GVK.Kind, "")
	if err != nil {
		return err
	}
	for _, obj := range items {
		sb.crs++
		if err := sb.finalizer(ctx, obj, m.GVK.Kind, release.Finalizer); err != nil {
			return err
		}
		if len(m.UpstreamLabels) > 0 {
			if err := sb.relabel(ctx, obj, m, chart); err != nil {
				return err
			}
		}
	}
	for _, gvk := range m.OutsideTypes {
		objs := &unstructured.UnstructuredList{}
		objs.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := sb.c.List(ctx, objs, client.MatchingLabels{release.LabelManaged: "true", release.LabelOwnerKind: m.GVK.Kind})
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range objs.Items {
			o := &objs.Items[i]
			sb.say("deleted %s %s: written by this operator for a %s of namespace %s; the upstream operator writes its own", gvk.Kind, objectName(o), m.GVK.Kind, o.GetLabels()[release.LabelOwnerNamespace])
			if sb.dryRun {
				continue
			}
			if err := sb.c.Delete(ctx, o, client.Preconditions{UID: ptr(o.GetUID())}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete %s %s: %w", gvk.Kind, objectName(o), err)
			}
		}
	}
	return nil
}

// finalizer removes the operator's finalizer from the CR, guarded by its
// resourceVersion; the other finalizers stay.
func (sb *switchBack) finalizer(ctx context.Context, obj client.Object, kind, finalizer string) error {
	if !slices.Contains(obj.GetFinalizers(), finalizer) {
		return nil
	}
	sb.say("%s %s/%s: removed finalizer %s", kind, obj.GetNamespace(), obj.GetName(), finalizer)
	if sb.dryRun {
		return nil
	}
	// Guarded by the resourceVersion, read again when something else wrote
	// the CR in between (its status, another controller's finalizer).
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := sb.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		orig := obj.DeepCopyObject().(client.Object)
		obj.SetFinalizers(slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return f == finalizer }))
		return sb.c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("%s %s/%s: remove finalizer %s: %w (run the command again)", kind, obj.GetNamespace(), obj.GetName(), finalizer, err)
	}
	return nil
}

// removeFinalizerCommand is `manager remove-finalizer NAME...`: after the
// switch, once the upstream operator is stopped, it removes that
// operator's finalizers (trustyai.opendatahub.io/finalizer and the like)
// from every CR of the kinds served, LMEvalJobs included: nothing else
// would, and a CR deleted later would wait for ever. The cleanup they stood
// for is this operator's own finalizer's now. Only the named finalizers go.
func removeFinalizerCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("remove-finalizer", flag.ContinueOnError)
	dryRun := fs.Bool("dry-run", false, "print what would be changed, change nothing")
	ws, _, c, err := clusterCommand(fs, args, stderr, finalizerNames)
	if err != nil || c == nil {
		return err
	}
	names := fs.Args()
	ctx := context.Background()
	sb := &switchBack{c: c, out: stdout, dryRun: *dryRun}
	lists := []func() (string, client.ObjectList){func() (string, client.ObjectList) { return lmv1alpha1.Kind, &lmv1alpha1.LMEvalJobList{} }}
	for _, w := range ws {
		m, err := operator.MetaFor(w)
		if err != nil {
			return err
		}
		lists = append(lists, func() (string, client.ObjectList) { return m.GVK.Kind, m.NewList() })
	}
	for _, l := range lists {
		kind, list := l()
		items, err := crsOf(ctx, c, list, kind, "")
		if err != nil {
			return err
		}
		for _, item := range items {
			for _, n := range names {
				if err := sb.finalizer(ctx, item, kind, n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// finalizerNames checks remove-finalizer's arguments: one or more, none a
// flag (Go's flags end at the first name: "NAME --dry-run" would otherwise
// remove NAME for real), never this operator's own (switch-back's).
func finalizerNames(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("name at least one finalizer")
	}
	for _, n := range names {
		if strings.HasPrefix(n, "-") {
			return fmt.Errorf("%s: flags go before the finalizer names (remove-finalizer --dry-run NAME...)", n)
		}
		if n == release.Finalizer {
			return fmt.Errorf("%s is this operator's own: switch-back removes it on the way back", n)
		}
	}
	return nil
}

// relabel sets the upstream operator's labels on the CR's objects: those of
// its release (the operator's label and Helm's release annotation) and its
// claims (the owner annotations they carry instead of a reference).
func (sb *switchBack) relabel(ctx context.Context, obj client.Object, m release.Meta, chart *charts.Chart) error {
	relName := naming.ReleaseName(m.ReleasePrefix, obj.GetNamespace(), obj.GetName())
	for _, gk := range chart.Kinds {
		mapping, err := sb.c.RESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return err
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		objs := &unstructured.UnstructuredList{}
		objs.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(gk.Kind + "List"))
		if err := sb.c.List(ctx, objs, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{release.LabelManaged: "true"}); err != nil {
			return fmt.Errorf("list %s in %s: %w", gk.Kind, obj.GetNamespace(), err)
		}
		for i := range objs.Items {
			o := &objs.Items[i]
			a := o.GetAnnotations()
			if a[guard.AnnotationReleaseName] != relName && a["operator-sdk/primary-resource"] != obj.GetNamespace()+"/"+obj.GetName() {
				continue
			}
			labels := o.GetLabels()
			missing := false
			for k, v := range m.UpstreamLabels {
				missing = missing || labels[k] != v
			}
			if !missing {
				continue
			}
			sb.say("%s %s/%s: labelled for the upstream operator", gk.Kind, o.GetNamespace(), o.GetName())
			if sb.dryRun {
				continue
			}
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := sb.c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
					return err
				}
				orig := o.DeepCopy()
				o.SetLabels(mergedMap(o.GetLabels(), m.UpstreamLabels))
				return sb.c.Patch(ctx, o, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
			})
			if client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("label %s %s/%s: %w (run switch-back again)", gk.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}

func objectName(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func ptr[T any](v T) *T { return &v }
