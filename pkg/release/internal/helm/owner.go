package helm

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
)

const (
	// ManagedBy names the operator in events, descriptions and field managers.
	ManagedBy = "ai-stack-operator"
	// LabelOwnerKind, LabelOwnerNamespace and LabelOwnerUID on a release
	// record name its CR (CR names can be longer than a label value).
	LabelOwnerKind      = "ai-stack-operator.io/owner-kind"
	LabelOwnerNamespace = "ai-stack-operator.io/owner-namespace"
	LabelOwnerUID       = "ai-stack-operator.io/owner-uid"
)

// LabelOwnerName on a release record is its CR's name (naming.NameLabel:
// the name, or a digest of one too long for a label).
const LabelOwnerName = "ai-stack-operator.io/owner-name"

// Owner is the CR whose release records a storage driver serves: every
// record it reads, adopts, upgrades or deletes carries this CR's owner
// labels, and every record it writes gets them. A record of the same name
// with another CR's labels is not there for Helm (a release name that two
// CRs share, however they came to, cannot hand one CR's objects to the
// other's upgrade or uninstall).
type Owner struct {
	// Kind, Namespace and Name of the CR, and its UID.
	Kind, Namespace, Name string
	UID                   types.UID
	// Release is the CR's release name; Legacy the name earlier versions
	// gave it (the same when the name is short).
	Release, Legacy string
}

// OwnerOf is the owner of a CR of a kind whose releases start with prefix.
func OwnerOf(obj client.Object, kind, prefix string) Owner {
	ns, name := obj.GetNamespace(), obj.GetName()
	return Owner{
		Kind: kind, Namespace: ns, Name: name, UID: obj.GetUID(),
		Release: naming.ReleaseName(prefix, ns, name),
		Legacy:  naming.LegacyReleaseName(prefix, ns, name),
	}
}

// Labels are the owner labels of the CR's records.
func (o Owner) Labels() map[string]string {
	return map[string]string{
		LabelOwnerKind: o.Kind, LabelOwnerNamespace: o.Namespace,
		LabelOwnerName: naming.NameLabel(o.Name), LabelOwnerUID: string(o.UID),
	}
}

// owns says whether a record with these labels is the CR's: kind,
// namespace and name must be its own. Records written before the name label
// existed are the CR's when their release name spells the CR exactly (a
// short name: the same then as now) or when they carry its UID (which nobody
// can choose); the next upgrade gives them the name label.
func (o Owner) owns(labels map[string]string) bool {
	if labels[LabelOwnerKind] != o.Kind || labels[LabelOwnerNamespace] != o.Namespace {
		return false
	}
	if n := labels[LabelOwnerName]; n != "" {
		return n == naming.NameLabel(o.Name)
	}
	return o.Release == o.Legacy || (o.UID != "" && labels[LabelOwnerUID] == string(o.UID))
}

// Current says whether a record the CR owns was written for this very CR
// with today's labels: another UID is an earlier CR of the same name (its
// objects name that CR as their owner, which the garbage collector deletes),
// and a record without the name label is an older operator's. Either is
// upgraded rather than repaired, so that every object is rendered again
// with this CR as its owner.
func (o Owner) Current(labels map[string]string) bool {
	return labels[LabelOwnerUID] == string(o.UID) && labels[LabelOwnerName] == naming.NameLabel(o.Name)
}
