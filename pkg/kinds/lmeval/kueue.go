package lmeval

import (
	"crypto/sha1" //nolint:gosec // Kueue's workload names hash with SHA-1; the name is what is matched, not a secret.
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// Kueue admission. Where the cluster serves Kueue's Workload API, a job
// labelled kueue.x-k8s.io/queue-name gets a Workload (one pod set, the
// job's pod) and no pod until Kueue admits it; the pod then runs where the
// admission puts it (the flavors' node labels and tolerations). An eviction
// (preemption, deactivation) deletes the pod; once it is gone the admission
// is handed back so that Kueue queues the Workload again. A finished job
// marks its Workload Finished, which frees the quota.
//
// Upstream (its JOB_MGR service, Kueue's jobframework) flips the job's
// spec.suspend and rewrites spec.pod.affinity on admission; this operator
// never writes a user's spec: Kueue's admission decides for a queued job,
// and spec.suspend is Kueue's, as it is upstream's once Kueue manages it.
const (
	// KueueQueueLabel queues a job for Kueue (upstream's label).
	KueueQueueLabel = "kueue.x-k8s.io/queue-name"
	// KueuePriorityLabel names the job's WorkloadPriorityClass.
	KueuePriorityLabel = "kueue.x-k8s.io/priority-class"
	// PodSetName is the Workload's one pod set (Kueue's default name).
	PodSetName = "main"

	kueueGroup = "kueue.x-k8s.io"

	// Kueue's Workload condition types, reasons and field values.
	wlQuotaReserved = "QuotaReserved"
	wlAdmitted      = "Admitted"
	wlEvicted       = "Evicted"
	wlFinished      = "Finished"
	wlRequeued      = "Requeued"
	// TypeAdmitted is this operator's condition on a queued job.
	TypeAdmitted = "Admitted"
	// Reasons of TypeAdmitted (besides Kueue's eviction reasons).
	ReasonAdmitted = "Admitted"
	ReasonPending  = "Pending"
)

// KueueVersions are the versions of Kueue's API the operator speaks, the
// one preferred first: v1beta2 (served since Kueue 0.15, stored since
// 0.16) and v1beta1 (Kueue 0.15's storage and every earlier release's).
var KueueVersions = []string{"v1beta2", "v1beta1"}

// KueueGVK is a kind of Kueue's API at a version.
func KueueGVK(version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: kueueGroup, Version: version, Kind: kind}
}

// Kueue's kinds the operator uses, at the preferred version.
var (
	WorkloadGVK              = KueueGVK("v1beta2", "Workload")
	ResourceFlavorGVK        = KueueGVK("v1beta2", "ResourceFlavor")
	WorkloadPriorityClassGVK = KueueGVK("v1beta2", "WorkloadPriorityClass")
)

// QueueName is the job's Kueue queue ("" when not queued).
func QueueName(job *lmv1alpha1.LMEvalJob) string { return job.Labels[KueueQueueLabel] }

// WorkloadName is the name of the job's Workload: Kueue's own for a job of
// this kind (jobframework.GetWorkloadNameForOwnerWithGVK), so that
// `kubectl get workloads` shows what it shows under upstream's operator.
func WorkloadName(jobName, uid string) string {
	prefix := strings.ToLower(lmv1alpha1.Kind) + "-" + jobName
	if len(prefix) > 253-6 {
		prefix = prefix[:253-6]
	}
	h := sha1.New() //nolint:gosec // as Kueue names it
	h.Write([]byte(lmv1alpha1.Kind + "\n" + lmv1alpha1.GroupVersion.Group + "\n" + jobName + "\n" + uid))
	return prefix + "-" + hex.EncodeToString(h.Sum(nil))[:5]
}

// Priority is the job's Kueue priority: a WorkloadPriorityClass's name and
// value (from KueuePriorityLabel), or none.
type Priority struct {
	Class string
	Value int32
}

// Workload is the job's Workload at the version of Kueue's API given:
// queue, one pod set of the job's pod template, priority; labels are the
// operator's (its cache holds only those), annotations carry the spec hash
// it was made for. The owner reference is the caller's.
func Workload(job *lmv1alpha1.LMEvalJob, version string, pod corev1.PodSpec, prio *Priority, labels map[string]string) (*unstructured.Unstructured, error) {
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{Spec: pod})
	if err != nil {
		return nil, err
	}
	delete(tmpl, "metadata")
	spec := map[string]any{
		"queueName": QueueName(job),
		"podSets":   []any{map[string]any{"name": PodSetName, "count": int64(1), "template": tmpl}},
	}
	switch {
	case prio == nil:
	case version == "v1beta1":
		spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
		spec["priorityClassName"] = prio.Class
		spec["priority"] = int64(prio.Value)
	default:
		spec["priorityClassRef"] = map[string]any{"group": kueueGroup, "kind": "WorkloadPriorityClass", "name": prio.Class}
		spec["priority"] = int64(prio.Value)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(KueueGVK(version, "Workload"))
	u.SetNamespace(job.Namespace)
	u.SetName(WorkloadName(job.Name, string(job.UID)))
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	l[LabelJob] = PodLabels(job, nil)[LabelJob]
	u.SetLabels(l)
	u.SetAnnotations(map[string]string{AnnotationSpecHash: SpecHash(&job.Spec)})
	return u, nil
}

// Admission is what the job's Workload says.
type Admission struct {
	// SpecHash is the spec the Workload was made for.
	SpecHash string
	// Reserved: Kueue reserved quota (status.admission is set).
	Reserved bool
	// Admitted: quota reserved and every admission check ready.
	Admitted bool
	// Evicted, with Kueue's reason and message: the pod must go.
	Evicted                bool
	EvictReason, EvictMsg  string
	Finished               bool
	ClusterQueue           string
	PendingMsg             string
	Flavors                []string
	NodeSelector           map[string]string
	Tolerations            []corev1.Toleration
	Labels, Annotations    map[string]string
	conditions             []metav1.Condition
	generation, resVersion string
}

type workloadStatus struct {
	Conditions []metav1.Condition `json:"conditions"`
	Admission  *struct {
		ClusterQueue      string `json:"clusterQueue"`
		PodSetAssignments []struct {
			Name    string            `json:"name"`
			Flavors map[string]string `json:"flavors"`
		} `json:"podSetAssignments"`
	} `json:"admission"`
	AdmissionChecks []struct {
		PodSetUpdates []struct {
			Name         string              `json:"name"`
			Labels       map[string]string   `json:"labels"`
			Annotations  map[string]string   `json:"annotations"`
			NodeSelector map[string]string   `json:"nodeSelector"`
			Tolerations  []corev1.Toleration `json:"tolerations"`
		} `json:"podSetUpdates"`
	} `json:"admissionChecks"`
}

// ObserveWorkload reads a Workload (nil: none).
func ObserveWorkload(u *unstructured.Unstructured) (*Admission, error) {
	if u == nil {
		return nil, nil
	}
	raw, _, err := unstructured.NestedMap(u.Object, "status")
	if err != nil {
		return nil, err
	}
	var st workloadStatus
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("workload %s status: %w", u.GetName(), err)
	}
	a := &Admission{SpecHash: u.GetAnnotations()[AnnotationSpecHash], conditions: st.Conditions,
		generation: fmt.Sprint(u.GetGeneration()), resVersion: u.GetResourceVersion()}
	is := func(t string) bool { return meta.IsStatusConditionTrue(st.Conditions, t) }
	a.Reserved = st.Admission != nil && is(wlQuotaReserved)
	a.Admitted = a.Reserved && is(wlAdmitted)
	a.Finished = is(wlFinished)
	if c := meta.FindStatusCondition(st.Conditions, wlEvicted); c != nil && c.Status == metav1.ConditionTrue {
		a.Evicted, a.EvictReason, a.EvictMsg = true, c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(st.Conditions, wlQuotaReserved); c != nil && c.Status != metav1.ConditionTrue {
		a.PendingMsg = c.Message
	}
	if st.Admission != nil {
		a.ClusterQueue = st.Admission.ClusterQueue
		for _, p := range st.Admission.PodSetAssignments {
			if p.Name == PodSetName {
				for _, f := range p.Flavors {
					if !slices.Contains(a.Flavors, f) {
						a.Flavors = append(a.Flavors, f)
					}
				}
			}
		}
		slices.Sort(a.Flavors)
	}
	for _, c := range st.AdmissionChecks {
		for _, p := range c.PodSetUpdates {
			if p.Name != PodSetName {
				continue
			}
			a.NodeSelector = merged(a.NodeSelector, p.NodeSelector)
			a.Labels = merged(a.Labels, p.Labels)
			a.Annotations = merged(a.Annotations, p.Annotations)
			a.Tolerations = append(a.Tolerations, p.Tolerations...)
		}
	}
	return a, nil
}

func merged(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, src)
	return dst
}

// Running: the pod may run (admitted, not evicted, not finished).
func (a *Admission) Running() bool { return a != nil && a.Admitted && !a.Evicted && !a.Finished }

// Flavor is what a ResourceFlavor puts on the pods it admits.
type Flavor struct {
	NodeLabels  map[string]string
	Tolerations []corev1.Toleration
}

// ObserveFlavor reads a ResourceFlavor.
func ObserveFlavor(u *unstructured.Unstructured) (Flavor, error) {
	var f struct {
		Spec struct {
			NodeLabels  map[string]string   `json:"nodeLabels"`
			Tolerations []corev1.Toleration `json:"tolerations"`
		} `json:"spec"`
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		return Flavor{}, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return Flavor{}, fmt.Errorf("resource flavor %s: %w", u.GetName(), err)
	}
	return Flavor{NodeLabels: f.Spec.NodeLabels, Tolerations: f.Spec.Tolerations}, nil
}

// Placement is what an admission adds to the job's pod: the node labels
// and tolerations of its flavors and of the admission checks' pod set
// updates, and their labels and annotations.
type Placement struct {
	NodeSelector        map[string]string
	Tolerations         []corev1.Toleration
	Labels, Annotations map[string]string
}

// PlacementOf is the pod's placement under an admission with its flavors.
func PlacementOf(a *Admission, flavors []Flavor) *Placement {
	p := &Placement{}
	for _, f := range flavors {
		p.NodeSelector = merged(p.NodeSelector, f.NodeLabels)
		p.Tolerations = append(p.Tolerations, f.Tolerations...)
	}
	p.NodeSelector = merged(p.NodeSelector, a.NodeSelector)
	p.Tolerations = append(p.Tolerations, a.Tolerations...)
	p.Labels, p.Annotations = maps.Clone(a.Labels), maps.Clone(a.Annotations)
	return p
}

// EvictionHandled is the Workload status merge patch that hands an evicted
// Workload's quota back once its pod is gone, as Kueue's jobframework does:
// Requeued (True after a preemption or node failure, False otherwise, such
// as a deactivation, which Kueue requeues itself when reactivated),
// QuotaReserved False (Pending), Admitted False, and no admission.
func (a *Admission) EvictionHandled(now time.Time) ([]byte, error) {
	conds := slices.Clone(a.conditions)
	requeued := metav1.ConditionFalse
	if a.EvictReason == "Preempted" || a.EvictReason == "NodeFailures" {
		requeued = metav1.ConditionTrue
	}
	t := metav1.NewTime(now)
	meta.SetStatusCondition(&conds, metav1.Condition{Type: wlRequeued, Status: requeued, Reason: a.EvictReason, Message: a.EvictMsg, LastTransitionTime: t})
	meta.SetStatusCondition(&conds, metav1.Condition{Type: wlQuotaReserved, Status: metav1.ConditionFalse, Reason: ReasonPending, Message: a.EvictMsg, LastTransitionTime: t})
	meta.SetStatusCondition(&conds, metav1.Condition{Type: wlAdmitted, Status: metav1.ConditionFalse, Reason: "NoReservation", Message: "The workload has no reservation", LastTransitionTime: t})
	return a.statusPatch(conds, true)
}

// FinishedPatch is the Workload status merge patch that marks it Finished
// (Succeeded or Failed, with the job's message): Kueue frees its quota.
func (a *Admission) FinishedPatch(succeeded bool, message string, now time.Time) ([]byte, error) {
	conds := slices.Clone(a.conditions)
	reason := "Succeeded"
	if !succeeded {
		reason = "Failed"
	}
	if message == "" {
		message = "the LMEvalJob finished"
	}
	meta.SetStatusCondition(&conds, metav1.Condition{Type: wlFinished, Status: metav1.ConditionTrue, Reason: reason, Message: truncate(message, 32768), LastTransitionTime: metav1.NewTime(now)})
	return a.statusPatch(conds, false)
}

// statusPatch replaces the conditions (a merge patch replaces lists) and,
// with dropAdmission, removes status.admission; the resourceVersion makes
// it fail on a Workload that changed since it was read.
func (a *Admission) statusPatch(conds []metav1.Condition, dropAdmission bool) ([]byte, error) {
	for i := range conds {
		if conds[i].LastTransitionTime.IsZero() {
			conds[i].LastTransitionTime = metav1.NewTime(time.Unix(0, 0))
		}
	}
	status := map[string]any{"conditions": conds}
	if dropAdmission {
		status["admission"] = nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": a.resVersion},
		"status":   status,
	})
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Queue is what the state machine sees of a job queued for Kueue.
type Queue struct {
	// Name is the LocalQueue.
	Name string
	// Admission is the Workload's (nil: none yet).
	Admission *Admission
	// Problem keeps the Workload from being made: the field and the fix.
	Problem string
}

// admittedCondition is the job's Admitted condition.
func (q *Queue) admittedCondition(gen int64) metav1.Condition {
	c := metav1.Condition{Type: TypeAdmitted, Status: metav1.ConditionFalse, Reason: ReasonPending, ObservedGeneration: gen}
	a := q.Admission
	switch {
	case q.Problem != "":
		c.Reason, c.Message = "WorkloadNotCreated", q.Problem
	case a == nil:
		c.Message = fmt.Sprintf("waiting for Kueue: the job's Workload for LocalQueue %q is being created", q.Name)
	case a.Finished:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonAdmitted, fmt.Sprintf("admitted by ClusterQueue %q; the Workload is finished", a.ClusterQueue)
		if a.ClusterQueue == "" {
			c.Message = "the Workload is finished"
		}
	case a.Evicted:
		c.Reason, c.Message = "Evicted", fmt.Sprintf("evicted by Kueue (%s): %s; the pod is deleted and the Workload queued again", a.EvictReason, a.EvictMsg)
	case a.Admitted:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonAdmitted, fmt.Sprintf("admitted by ClusterQueue %q", a.ClusterQueue)
	case a.PendingMsg != "":
		c.Message = fmt.Sprintf("waiting for Kueue in LocalQueue %q: %s", q.Name, a.PendingMsg)
	default:
		c.Message = fmt.Sprintf("waiting for Kueue in LocalQueue %q", q.Name)
	}
	return c
}
