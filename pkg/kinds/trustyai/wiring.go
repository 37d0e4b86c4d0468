package trustyai

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustyv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/trustyai/v1"
)

// The model-server wiring is the one place the operator writes objects it
// did not create (docs/security.md): by server-side apply, with a field
// manager of its own, of the fields it owns only (KServe's
// spec.predictor.logger; ModelMesh's payload processor and certificate),
// never forced, within a write budget, undone on delete, and switchable off.
//
// One TrustyAIService per namespace wires its model servers (upstream's
// model: a namespace has one service): the oldest. The others say so in
// their condition, and the next oldest takes over when it is deleted.

// FieldManager owns what the wiring applies to model servers.
const FieldManager = "ai-stack-operator-trustyai"

// TypeInferenceServicesPresent is upstream's condition of the wiring.
const TypeInferenceServicesPresent = "InferenceServicesPresent"

// eventInferenceServiceConfigured is upstream's event reason for each write
// of the wiring, to an InferenceService or a ModelMesh Deployment alike.
const eventInferenceServiceConfigured = "InferenceServiceConfigured"

// The wiring condition's reasons besides upstream's InferenceServicesFound
// and InferenceServicesNotFound.
const (
	ReasonWiringDisabled          = "WiringDisabled"
	ReasonAPINotFound             = "InferenceServiceAPINotFound"
	ReasonNamespaceWiredByAnother = "NamespaceWiredByAnother"
	ReasonFieldOwnedElsewhere     = "FieldOwnedElsewhere"
	ReasonRevertedByAnother       = "RevertedByAnother"
)

// The write budget: at most wiringBudget writes to one model server within
// wiringWindow. A controller that reverts what the wiring applies would
// otherwise meet a write on every one of its own.
const (
	wiringBudget = 3
	wiringWindow = 10 * time.Minute
)

// wiring is what the wiring did, for the condition.
type wiring struct {
	ok              bool
	reason, message string
}

// outcome is what the wiring did to one model server.
type outcome struct {
	// kind and name of the model server ("InferenceService", "ModelMesh Deployment").
	kind, name string
	state      state
	// detail says why, for the states that are not configured.
	detail string
}

type state int

const (
	configured state = iota
	// ownedElsewhere: another manager owns a field the wiring would set.
	ownedElsewhere
	// reverted: the budget is spent; another controller undoes the writes.
	reverted
	// unfit: the model server cannot be wired (ModelMesh without its mm container).
	unfit
)

// summarize turns the outcomes into the condition: the worst state wins.
func summarize(outs []outcome, serverAPI bool) wiring {
	by := map[state][]string{}
	var details []string
	for _, o := range outs {
		by[o.state] = append(by[o.state], o.kind+" "+o.name)
		if o.detail != "" {
			details = append(details, o.detail)
		}
	}
	switch {
	case len(by[reverted]) > 0:
		return wiring{reason: ReasonRevertedByAnother, message: strings.Join(details, "; ")}
	case len(by[ownedElsewhere]) > 0:
		return wiring{reason: ReasonFieldOwnedElsewhere, message: strings.Join(details, "; ")}
	case len(by[configured]) == 0 && len(by[unfit]) > 0:
		return wiring{reason: "InferenceServicesNotFound", message: strings.Join(details, "; ")}
	case len(by[configured]) == 0 && !serverAPI:
		return wiring{reason: ReasonAPINotFound, message: "no KServe InferenceService API on this cluster and no ModelMesh Deployment (label modelmesh-service=modelmesh-serving) in the namespace"}
	case len(by[configured]) == 0:
		return wiring{reason: "InferenceServicesNotFound", message: "no InferenceService or ModelMesh Deployment in the namespace sends its inferences to this service yet"}
	}
	msg := strings.Join(by[configured], ", ") + " send their inferences to the service"
	if len(details) > 0 {
		msg += "; " + strings.Join(details, "; ")
	}
	return wiring{ok: true, reason: "InferenceServicesFound", message: msg}
}

// wire points the namespace's model servers at the service. One already
// pointed at it is not written again.
func (k *Kind) wire(ctx context.Context, cr *trustyv1.TrustyAIService, in *Inputs) (wiring, error) {
	s, p := in.values.Settings, in.values.Platform
	if !s.Wiring {
		return wiring{reason: ReasonWiringDisabled, message: "the operator setting " + KeyWiring + " is disabled: model servers are not pointed at the service"}, nil
	}
	peers, err := k.livePeers(ctx, cr.Namespace)
	if err != nil {
		return wiring{}, err
	}
	if w := wirerOf(append(peers, *cr)); w != cr.Name {
		return wiring{reason: ReasonNamespaceWiredByAnother, message: fmt.Sprintf("TrustyAIService %s, the oldest in the namespace, receives the model servers' inferences: one service per namespace is wired", w)}, nil
	}
	var outs []outcome
	if p.KServe {
		o, err := k.wireInferenceServices(ctx, cr, loggerURL(cr, p.TLSMode()), s.Serverless)
		if err != nil {
			return wiring{}, err
		}
		outs = append(outs, o...)
	}
	o, err := k.wireModelMesh(ctx, cr, p.TLSMode())
	if err != nil {
		return wiring{}, err
	}
	return summarize(append(outs, o...), p.KServe), nil
}

// unwire gives back what the wiring applied to the namespace's model
// servers, unless another TrustyAIService of the namespace takes over (its
// next reconcile applies its own fields in place of these, by the same field
// manager), and takes the service's URL out of every MM_PAYLOAD_PROCESSORS
// list of another manager it was appended to. What other managers set stays.
func (k *Kind) unwire(ctx context.Context, cr *trustyv1.TrustyAIService) error {
	peers, err := k.livePeers(ctx, cr.Namespace)
	if err != nil {
		return err
	}
	handover := false
	for _, p := range peers {
		handover = handover || p.Name != cr.Name
	}
	if !handover {
		if err := k.unwireInferenceServices(ctx, cr); err != nil {
			return err
		}
	}
	// The URL appended to another manager's list goes in any case: the one
	// that takes over appends its own.
	return k.unwireModelMesh(ctx, cr, handover)
}

// livePeers are the namespace's TrustyAIServices that are not being deleted.
func (k *Kind) livePeers(ctx context.Context, ns string) ([]trustyv1.TrustyAIService, error) {
	list := &trustyv1.TrustyAIServiceList{}
	if err := k.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list the namespace's TrustyAIServices: %w", err)
	}
	var live []trustyv1.TrustyAIService
	for _, t := range list.Items {
		if t.DeletionTimestamp.IsZero() {
			live = append(live, t)
		}
	}
	return live, nil
}

// wirerOf names the one that wires the namespace: the oldest, then the
// first by name.
func wirerOf(tas []trustyv1.TrustyAIService) string {
	if len(tas) == 0 {
		return ""
	}
	sort.SliceStable(tas, func(i, j int) bool {
		a, b := tas[i].CreationTimestamp, tas[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return tas[i].Name < tas[j].Name
	})
	return tas[0].Name
}

// budgetKey is a write budget's key: one service's writes to one model
// server. Per service: when a service hands a namespace over to the next
// (its give-back, the successor's apply), the successor starts with a
// budget of its own, and the handover's writes are never taken for another
// controller's reverts.
func budgetKey(cr *trustyv1.TrustyAIService, server types.UID) types.UID {
	return types.UID(string(cr.UID) + "/" + string(server))
}

// writeBudget remembers the wiring's writes to each model server, by UID.
// It lives as long as the process: a restart starts every budget afresh.
type writeBudget struct {
	mu     sync.Mutex
	writes map[types.UID][]time.Time
}

// allows says whether the object had fewer than wiringBudget writes within
// wiringWindow; it forgets objects without recent writes.
func (b *writeBudget) allows(uid types.UID, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, ts := range b.writes {
		recent := ts[:0]
		for _, t := range ts {
			if now.Sub(t) < wiringWindow {
				recent = append(recent, t)
			}
		}
		if len(recent) == 0 {
			delete(b.writes, id)
		} else {
			b.writes[id] = recent
		}
	}
	return len(b.writes[uid]) < wiringBudget
}

// record counts a write that changed the object (an apply another manager's
// ownership refused changed nothing, and is not counted).
func (b *writeBudget) record(uid types.UID, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writes == nil {
		b.writes = map[types.UID][]time.Time{}
	}
	b.writes[uid] = append(b.writes[uid], now)
}

// otherOwners are the managers besides the wiring's that own the field path
// (structured-merge-diff's notation), sorted.
func otherOwners(fields []metav1.ManagedFieldsEntry, path string) []string {
	var out []string
	for _, m := range fields {
		if m.Manager != FieldManager && !slices.Contains(out, m.Manager) && ownedPaths([]metav1.ManagedFieldsEntry{m}, false)[path] {
			out = append(out, m.Manager)
		}
	}
	sort.Strings(out)
	return out
}

// lastWriter names the manager other than the wiring's that wrote the
// object last, for the RevertedByAnother message.
func lastWriter(fields []metav1.ManagedFieldsEntry) string {
	name, at := "another controller", time.Time{}
	for _, m := range fields {
		if m.Manager == FieldManager || m.Manager == AppendManager || m.Time == nil || m.Subresource != "" {
			continue
		}
		if m.Time.Time.After(at) {
			name, at = m.Manager, m.Time.Time
		}
	}
	return name
}

// revertedDetail is the message of a model server whose budget is spent.
func revertedDetail(kind, name string, fields []metav1.ManagedFieldsEntry) string {
	return fmt.Sprintf("%s %s: %q removed what the operator applied %d times within %s; the operator stops writing it for now (remove the other controller's setting or set %s to disabled)", kind, name, lastWriter(fields), wiringBudget, wiringWindow, KeyWiring)
}

// applyWired server-side applies the wiring's own fields, never forced: a
// conflict (another manager owns a field) is an outcome, not an error. An
// empty eventMessage records no event (another write of the same
// reconcile recorded one).
func (k *Kind) applyWired(ctx context.Context, cr *trustyv1.TrustyAIService, u client.Object, kind, fix, eventReason, eventMessage string) (outcome, error) {
	err := k.Client.Patch(ctx, u, client.Apply, client.FieldOwner(FieldManager)) //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
	switch {
	case vanished(err):
		// Deleted (or replaced) since it was listed: its event reconciles again.
		return outcome{kind: kind, name: u.GetName(), state: unfit, detail: fmt.Sprintf("%s %s changed while it was configured; looking again", kind, u.GetName())}, nil
	case apierrors.IsConflict(err):
		return outcome{kind: kind, name: u.GetName(), state: ownedElsewhere, detail: fmt.Sprintf("%s %s: %s; the operator does not force it: %s", kind, u.GetName(), conflictOf(err), fix)}, nil
	case err != nil:
		return outcome{}, fmt.Errorf("apply to %s %s: %w", kind, u.GetName(), err)
	}
	if eventMessage != "" {
		k.Recorder.Event(cr, corev1.EventTypeNormal, eventReason, eventMessage)
	}
	return outcome{kind: kind, name: u.GetName(), state: configured}, nil
}

// conflictOf is the part of an apply conflict that names the other manager
// and the field.
func conflictOf(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "conflict"); i >= 0 {
		return msg[i:]
	}
	return msg
}

// release server-side applies nothing, which gives back every field the
// wiring owned on the object.
func (k *Kind) release(ctx context.Context, u client.Object) error {
	if err := k.Client.Patch(ctx, u, client.Apply, client.FieldOwner(FieldManager)); client.IgnoreNotFound(err) != nil && !vanished(err) { //nolint:staticcheck // an apply of an unstructured object: Client.Apply takes typed apply configurations
		return fmt.Errorf("give back the wiring's fields of %s %s: %w", u.GetObjectKind().GroupVersionKind().Kind, u.GetName(), err)
	}
	return nil
}

// vanished says whether an apply failed on its UID precondition: the object
// listed is gone (or was replaced by another of its name), and nothing was
// created in its place.
func vanished(err error) bool {
	switch {
	case apierrors.IsConflict(err):
		// Gone: "uid mismatch: the provided object specified uid ..., and no
		// existing object was found".
		return strings.Contains(err.Error(), "uid mismatch")
	case apierrors.IsInvalid(err):
		// Replaced: "metadata.uid: Invalid value: ...: field is immutable".
		return strings.Contains(err.Error(), "metadata.uid")
	}
	return false
}
