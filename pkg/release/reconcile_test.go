package release

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// The loop's unit tests: the reconciler with its release client over fake
// clients (release records in a fake clientset, objects in a fake dynamic
// client that keeps what is applied) and a fake API client, for a toy kind
// whose CRs are Deployments (a namespaced type with a status subresource)
// and whose chart renders one Service. What the API server does is tested
// in test/integration; here it is the order of the phases, what reaches
// Status, what is written and what is returned.

// fakeReleases are the release clients over fake clients: installs and
// upgrades are counted as the records they create, and applyErr fails
// every create and apply of an object.
type fakeReleases struct {
	records            *k8sfake.Clientset
	objects            *dynamicfake.FakeDynamicClient
	installs, upgrades int
	applyErr           error
}

func newFakeReleases() *fakeReleases {
	f := &fakeReleases{records: k8sfake.NewClientset(), objects: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())}
	f.records.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cm, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap)
		switch {
		case !ok:
		case cm.Labels["version"] == "1":
			f.installs++
		default:
			f.upgrades++
		}
		return false, nil, nil
	})
	f.objects.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if f.applyErr != nil {
			return true, nil, f.applyErr
		}
		return false, nil, nil
	})
	f.objects.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		if f.applyErr != nil {
			return true, nil, f.applyErr
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(p.GetPatch(), &u.Object); err != nil {
			return true, nil, err
		}
		tracker := f.objects.Tracker()
		if _, err := tracker.Get(p.GetResource(), p.GetNamespace(), p.GetName()); err == nil {
			return true, u, tracker.Update(p.GetResource(), u, p.GetNamespace())
		}
		return true, u, tracker.Create(p.GetResource(), u, p.GetNamespace())
	})
	return f
}

// releases are the reconciler's release clients over the fakes.
func (f *fakeReleases) releases() *Releases {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Service"), meta.RESTScopeNamespace)
	return NewReleasesFor(f.objects, mapper, f.records.CoreV1().ConfigMaps("ops"), map[string]string{"Deployment": "toy"})
}

// storage is Helm 4's own storage of the records.
func (f *fakeReleases) storage() *storage.Storage {
	return storage.Init(driver.NewConfigMaps(f.records.CoreV1().ConfigMaps("ops")))
}

// last is the release's latest record, as Helm reads it.
func (f *fakeReleases) last(t *testing.T, name string) *helmrelease.Release {
	t.Helper()
	r, err := f.storage().Last(name)
	require.NoError(t, err)
	rel, ok := r.(*helmrelease.Release)
	require.True(t, ok)
	return rel
}

// toyKind serves Deployments as CRs: the values are the replicas; Status
// keeps what it was told and writes a Reconciled condition.
type toyKind struct {
	gatherErr, prepareErr, cleanupErr error
	finished                          any
	calls                             []string
	told                              []Observation
}

type toyInputs struct{ replicas int32 }

func (k *toyKind) Meta() Meta {
	return Meta{
		GVK:           appsv1.SchemeGroupVersion.WithKind("Deployment"),
		NewObject:     func() client.Object { return &appsv1.Deployment{} },
		NewList:       func() client.ObjectList { return &appsv1.DeploymentList{} },
		ReleasePrefix: "toy",
	}
}
func (k *toyKind) Gather(_ context.Context, d *appsv1.Deployment) (*toyInputs, error) {
	k.calls = append(k.calls, "gather")
	return &toyInputs{replicas: ptr.Deref(d.Spec.Replicas, 1)}, k.gatherErr
}
func (k *toyKind) Values(_ *appsv1.Deployment, in *toyInputs) (map[string]any, error) {
	k.calls = append(k.calls, "values")
	return Values(map[string]any{"replicas": in.replicas})
}
func (k *toyKind) Prepare(context.Context, *appsv1.Deployment, *toyInputs) error {
	k.calls = append(k.calls, "prepare")
	return k.prepareErr
}
func (k *toyKind) Finish(context.Context, *appsv1.Deployment, *toyInputs) (any, error) {
	k.calls = append(k.calls, "finish")
	return k.finished, nil
}
func (k *toyKind) Cleanup(context.Context, *appsv1.Deployment) error {
	k.calls = append(k.calls, "cleanup")
	return k.cleanupErr
}
func (k *toyKind) Status(_ context.Context, d *appsv1.Deployment, _ *toyInputs, obs Observation) error {
	k.calls = append(k.calls, "status")
	k.told = append(k.told, obs)
	c := appsv1.DeploymentCondition{Type: status.TypeReconciled, Status: corev1.ConditionTrue, Reason: "Applied"}
	if obs.Failure != nil {
		c = appsv1.DeploymentCondition{Type: status.TypeReconciled, Status: corev1.ConditionFalse, Reason: obs.Failure.Reason, Message: obs.Failure.Error()}
	}
	d.Status.Conditions = []appsv1.DeploymentCondition{c}
	return nil
}
func (k *toyKind) Conditions(d *appsv1.Deployment) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range d.Status.Conditions {
		out = append(out, metav1.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

// loop is a reconciler of the toy kind with its fakes.
type loop struct {
	r        *Reconciler
	kind     *toyKind
	actions  *fakeReleases
	client   client.Client
	events   *record.FakeRecorder
	statuses int
	req      ctrl.Request
}

func newLoop(t *testing.T) *loop {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	cr := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "toy", UID: "uid-1", Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	l := &loop{kind: &toyKind{}, actions: newFakeReleases(), events: record.NewFakeRecorder(100), req: ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cr)}}
	l.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(cr).WithStatusSubresource(cr).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			l.statuses++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\nspec:\n  ports:\n  - port: {{ .Values.replicas }}\n"
	toy := &charts.Chart{Chart: &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "toy", Version: "0.1.0"}, Templates: []*common.File{{Name: "templates/service.yaml", Data: []byte(service)}}}, Digest: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Kinds: []schema.GroupKind{{Kind: "Service"}}}
	r, err := NewReconciler(WithClient(l.client), WithKind(Register[*appsv1.Deployment, *toyInputs](l.kind)), WithChart(toy),
		WithReleases(l.actions.releases()), WithEventRecorder(l.events), WithReconcilePeriod(10*time.Minute))
	require.NoError(t, err)
	l.r = r
	return l
}

func (l *loop) reconcile(t *testing.T) (ctrl.Result, error) {
	t.Helper()
	l.kind.calls = nil
	return l.r.Reconcile(context.Background(), l.req)
}

func (l *loop) cr(t *testing.T) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, l.client.Get(context.Background(), l.req.NamespacedName, d))
	return d
}

func (l *loop) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-l.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A new CR: the finalizer, the phases in order, one install, one status
// write with the release's objects, the event, the next look at the period.
// Unchanged, it costs no install, upgrade or write; a changed spec upgrades.
func TestLoopInstallsOnceAndThenWritesNothing(t *testing.T) {
	l := newLoop(t)
	res, err := l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{RequeueAfter: 10 * time.Minute}, res)
	assert.Equal(t, []string{"gather", "values", "prepare", "finish", "status"}, l.kind.calls)
	assert.Equal(t, 1, l.actions.installs)
	assert.Equal(t, 1, l.statuses)
	cr := l.cr(t)
	assert.Contains(t, cr.Finalizers, Finalizer)
	require.Len(t, cr.Status.Conditions, 1)
	assert.Equal(t, corev1.ConditionTrue, cr.Status.Conditions[0].Status)
	obs := l.kind.told[0]
	assert.True(t, obs.Applied)
	assert.Nil(t, obs.Failure)
	assert.Equal(t, []ObjectRef{{Kind: "Service", Name: "toy-team-a.toy"}}, obs.Objects)
	assert.Empty(t, l.drainEvents(), "an install is in the status, not an event (a write)")

	_, err = l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, 1, l.actions.installs)
	assert.Zero(t, l.actions.upgrades)
	assert.Equal(t, 1, l.statuses, "an unchanged CR writes nothing")
	assert.Empty(t, l.drainEvents())

	cr.Spec.Replicas = ptr.To[int32](3)
	require.NoError(t, l.client.Update(context.Background(), cr))
	_, err = l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, 1, l.actions.upgrades)
	assert.Contains(t, l.drainEvents(), "Normal Upgraded upgraded release toy-team-a.toy to revision 2")
}

// What Finish returns reaches Status through the Observation.
func TestLoopHandsFinishsResultToStatus(t *testing.T) {
	l := newLoop(t)
	l.kind.finished = "wired 2 model servers"
	_, err := l.reconcile(t)
	require.NoError(t, err)
	require.Len(t, l.kind.told, 1)
	assert.Equal(t, "wired 2 model servers", l.kind.told[0].Finished)
}

// A failure the user fixes reaches Status as it was made, field and all,
// nothing is applied, the condition's turn is a Warning event, and no error
// is returned (the CR waits for a change). The same failure again writes
// nothing.
func TestLoopPassesAFailureThroughUnchanged(t *testing.T) {
	l := newLoop(t)
	l.kind.gatherErr = &status.Failure{Reason: status.ReasonInvalidSpec, Field: "spec.replicas", Message: "must be odd"}
	res, err := l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{RequeueAfter: 10 * time.Minute}, res)
	assert.Equal(t, []string{"gather", "status"}, l.kind.calls, "nothing is prepared or applied")
	assert.Zero(t, l.actions.installs)
	require.Len(t, l.kind.told, 1)
	assert.Equal(t, l.kind.gatherErr, l.kind.told[0].Failure)
	assert.False(t, l.kind.told[0].Applied)
	cr := l.cr(t)
	assert.Equal(t, "spec.replicas: must be odd", cr.Status.Conditions[0].Message)
	assert.Equal(t, []string{"Warning InvalidSpec Reconciled is False: spec.replicas: must be odd"}, l.drainEvents())

	_, err = l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, 1, l.statuses)
	assert.Empty(t, l.drainEvents())
}

// A failed install is in the status (InstallFailed) and returned, to be
// retried with backoff; an error of Gather that is no failure is returned
// without a status write.
func TestLoopRetriesWhatTheUserDoesNotFix(t *testing.T) {
	l := newLoop(t)
	l.actions.applyErr = errors.New("connection reset")
	res, err := l.reconcile(t)
	require.ErrorContains(t, err, "connection reset")
	assert.Equal(t, ctrl.Result{}, res, "backoff, not the period")
	assert.Equal(t, status.ReasonInstallFailed, l.cr(t).Status.Conditions[0].Reason)
	assert.Equal(t, 1, l.statuses)

	l.kind.gatherErr = errors.New("cache not synced")
	_, err = l.reconcile(t)
	require.ErrorContains(t, err, "cache not synced")
	assert.Equal(t, []string{"gather"}, l.kind.calls)
	assert.Equal(t, 1, l.statuses)
}

// A write outside Helm the operator may not do is the administrator's to
// fix: OperatorForbidden, looked at again soon (no watch sees the fix).
func TestLoopForbiddenWritesAreRecheckedSoon(t *testing.T) {
	l := newLoop(t)
	l.kind.prepareErr = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
	res, err := l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{RequeueAfter: conflictRecheck}, res)
	assert.Equal(t, status.ReasonOperatorForbidden, l.cr(t).Status.Conditions[0].Reason)
	assert.Zero(t, l.actions.installs)
}

// Deletion: the release's records go, then Cleanup, then the finalizer; a
// failed cleanup holds the finalizer, says why in the status (Deleting) and
// is retried.
func TestLoopUninstallsThenLetsGo(t *testing.T) {
	l := newLoop(t)
	_, err := l.reconcile(t)
	require.NoError(t, err)
	require.NoError(t, l.client.Delete(context.Background(), l.cr(t)))

	l.kind.cleanupErr = errors.New("model server unreachable")
	_, err = l.reconcile(t)
	require.ErrorContains(t, err, "model server unreachable")
	cr := l.cr(t)
	assert.Contains(t, cr.Finalizers, Finalizer)
	assert.Equal(t, status.ReasonUninstallFailed, cr.Status.Conditions[0].Reason)
	obs := l.kind.told[len(l.kind.told)-1]
	assert.True(t, obs.Deleting)
	assert.Contains(t, l.drainEvents(), "Warning UninstallFailed Reconciled is False: clean up: model server unreachable")

	l.kind.cleanupErr = nil
	res, err := l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{}, res)
	assert.Equal(t, []string{"cleanup"}, l.kind.calls)
	_, err = l.actions.storage().History("toy-team-a.toy")
	assert.ErrorIs(t, err, driver.ErrReleaseNotFound, "the records are gone")
	_, err = l.actions.objects.Resource(corev1.SchemeGroupVersion.WithResource("services")).Namespace("team-a").Get(context.Background(), "toy-team-a.toy", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "and the objects: %v", err)
	err = l.client.Get(context.Background(), l.req.NamespacedName, &appsv1.Deployment{})
	assert.True(t, apierrors.IsNotFound(err), "the finalizer went, and with it the CR: %v", err)
}

// A deployed release of an earlier CR of the same name (its records carry
// another UID: the CR was deleted and created again) is upgraded, which
// renders every object for this CR, rather than repaired toward its stored
// manifest, which names the dead CR as the objects' controller.
func TestLoopUpgradesAReleaseOfAnEarlierCR(t *testing.T) {
	l := newLoop(t)
	_, err := l.reconcile(t)
	require.NoError(t, err)
	require.Equal(t, 1, l.actions.installs)
	rel := l.actions.last(t, "toy-team-a.toy")
	require.Equal(t, "uid-1", rel.Labels[LabelOwnerUID])
	rel.Labels[LabelOwnerUID] = "uid-of-the-dead-cr"
	require.NoError(t, l.actions.storage().Update(rel))

	_, err = l.reconcile(t)
	require.NoError(t, err)
	assert.Equal(t, 1, l.actions.upgrades, "upgraded, not repaired toward the dead CR's manifest")
	assert.Equal(t, "uid-1", l.actions.last(t, "toy-team-a.toy").Labels[LabelOwnerUID])
}
