package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"sync"
	"time"

	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// MaxRecordBytes is the most a release record may hold: the API server
// refuses a ConfigMap whose data exceeds 1 MiB; a little is left for the
// key and the record's description and timestamps.
const MaxRecordBytes = 1<<20 - 4<<10

// ErrRecordTooLarge is a release record over MaxRecordBytes.
var ErrRecordTooLarge = errors.New("release record too large")

// Records is Helm's ConfigMaps storage driver for one CR's release, with
// two changes:
//
//   - Only the CR's own records exist for Helm (Owner): queries and reads
//     skip a record with another CR's owner labels, deletes check them and
//     carry the record's UID as a precondition, and writes refuse a record
//     without them. Records that earlier versions stored under the CR's
//     legacy release name, with its UID, are moved to its release name the
//     first time its history is read.
//   - Writes are encoded by pooled gzip writers. Helm allocates a
//     compressor (about 800 KB at its best compression) for every record it
//     writes, two per upgrade: an eighth of what the operator allocated in a
//     soak (go tool pprof -sample_index=alloc_space). What is stored is byte
//     for byte what Helm stores (TestRecordsAreHelms), and Helm reads it.
type Records struct {
	impl  corev1client.ConfigMapInterface
	owner Owner
}

// NewRecords is the store of owner's records in impl.
func NewRecords(impl corev1client.ConfigMapInterface, owner Owner) *Records {
	return &Records{impl: impl, owner: owner}
}

// recordKey is the name of the ConfigMap of a release's revision, as Helm's storage names it.
func recordKey(name string, version int) string {
	return "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
}

// Get reads a record of the CR; ErrReleaseNotFound for another's.
func (r *Records) Get(key string) (*helmrelease.Release, error) {
	_, rls, err := r.read(key)
	return rls, err
}

// read reads a record of the CR and its ConfigMap; ErrReleaseNotFound for
// another's.
func (r *Records) read(key string) (*corev1.ConfigMap, *helmrelease.Release, error) {
	cm, err := r.impl.Get(context.Background(), key, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, ErrReleaseNotFound
	case err != nil:
		return nil, nil, err
	case !r.owner.owns(cm.Labels):
		return nil, nil, ErrReleaseNotFound
	}
	rls, err := decodeRecord(cm.Data["release"])
	if err != nil {
		return nil, nil, fmt.Errorf("decode release record %s: %w", key, err)
	}
	rls.Labels = withoutSystemLabels(cm.Labels)
	return cm, rls, nil
}

// Query lists the CR's records that match labels (the API server selects
// by the CR's kind and namespace too). A history query of the CR's release
// that finds nothing looks for the records of its legacy name, once.
func (r *Records) Query(query map[string]string) ([]*helmrelease.Release, error) {
	selector := maps.Clone(query)
	selector[LabelOwnerKind], selector[LabelOwnerNamespace] = r.owner.Kind, r.owner.Namespace
	list, err := r.impl.List(context.Background(), metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		return nil, err
	}
	var out []*helmrelease.Release
	for i := range list.Items {
		cm := &list.Items[i]
		if !r.owner.owns(cm.Labels) {
			continue
		}
		rls, err := decodeRecord(cm.Data["release"])
		if err != nil {
			return nil, fmt.Errorf("decode release record %s: %w", cm.Name, err)
		}
		rls.Labels = cm.Labels
		out = append(out, rls)
	}
	if len(out) == 0 && query["name"] == r.owner.Release && len(query) == 2 && r.owner.Legacy != r.owner.Release {
		if out, err = r.migrate(); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, ErrReleaseNotFound
	}
	return out, nil
}

// migrate moves the records stored under the CR's legacy release name, and
// carrying its UID, to its release name, and returns them. They keep their
// labels but the name label, so the next reconcile upgrades the release
// (its objects then carry the new release name).
func (r *Records) migrate() ([]*helmrelease.Release, error) {
	if r.owner.UID == "" {
		return nil, nil
	}
	sel := labels.SelectorFromSet(map[string]string{
		"name": r.owner.Legacy, "owner": "helm",
		LabelOwnerKind: r.owner.Kind, LabelOwnerNamespace: r.owner.Namespace, LabelOwnerUID: string(r.owner.UID),
	})
	list, err := r.impl.List(context.Background(), metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list legacy release records: %w", err)
	}
	var out []*helmrelease.Release
	for i := range list.Items {
		old := &list.Items[i]
		rls, err := decodeRecord(old.Data["release"])
		if err != nil {
			return nil, fmt.Errorf("decode release record %s: %w", old.Name, err)
		}
		rls.Name = r.owner.Release
		data, err := encodeRecord(rls)
		if err != nil {
			return nil, err
		}
		l := maps.Clone(old.Labels)
		l["name"] = r.owner.Release
		moved := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: recordKey(rls.Name, rls.Version), Labels: l}, Data: map[string]string{"release": data}}
		if _, err := r.impl.Create(context.Background(), moved, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("move release record %s: %w", old.Name, err)
		}
		if err := r.impl.Delete(context.Background(), old.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete moved release record %s: %w", old.Name, err)
		}
		rls.Labels = l
		out = append(out, rls)
	}
	return out, nil
}

// Delete deletes a record of the CR, with its UID as a precondition; a
// record of another CR is not found.
func (r *Records) Delete(key string) (*helmrelease.Release, error) {
	cm, rls, err := r.read(key)
	if err != nil {
		return nil, err
	}
	if err := r.impl.Delete(context.Background(), key, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, ErrReleaseNotFound
		}
		return nil, err
	}
	return rls, nil
}

// Create stores a new record; ErrReleaseExists when one has its key.
func (r *Records) Create(key string, rls *helmrelease.Release) error {
	obj, err := r.recordObject(key, rls, "createdAt")
	if err != nil {
		return err
	}
	if _, err := r.impl.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ErrReleaseExists
		}
		return err
	}
	return nil
}

// Update replaces a stored record.
func (r *Records) Update(key string, rls *helmrelease.Release) error {
	obj, err := r.recordObject(key, rls, "modifiedAt")
	if err != nil {
		return err
	}
	_, err = r.impl.Update(context.Background(), obj, metav1.UpdateOptions{})
	return err
}

// recordObject is recordObject for the CR's records: one without the CR's
// owner labels, or too large to store, is refused.
func (r *Records) recordObject(key string, rls *helmrelease.Release, stamp string) (*corev1.ConfigMap, error) {
	if !r.owner.owns(rls.Labels) {
		return nil, fmt.Errorf("release record %s: not labelled as %s %s/%s's", key, r.owner.Kind, r.owner.Namespace, r.owner.Name)
	}
	obj, err := recordObject(key, rls, stamp)
	if err != nil {
		return nil, err
	}
	if n := len(obj.Data["release"]); n > MaxRecordBytes {
		return nil, fmt.Errorf("%w: release %s revision %d is %d bytes encoded, over %d", ErrRecordTooLarge, rls.Name, rls.Version, n, MaxRecordBytes)
	}
	return obj, nil
}

// recordObject is the ConfigMap Helm's driver stores for rls: the release
// as base64 of gzip (best compression) of JSON, its labels and Helm's own,
// and the time of the write under stamp.
func recordObject(key string, rls *helmrelease.Release, stamp string) (*corev1.ConfigMap, error) {
	data, err := encodeRecord(rls)
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(rls.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[stamp] = strconv.FormatInt(time.Now().Unix(), 10)
	labels["name"] = rls.Name
	labels["owner"] = "helm"
	labels["status"] = rls.Info.Status.String()
	labels["version"] = strconv.Itoa(rls.Version)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: labels},
		Data:       map[string]string{"release": data},
	}, nil
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression)
	return w
}}

func encodeRecord(rls *helmrelease.Release) (string, error) {
	b, err := json.Marshal(rls)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// gzipMagic starts a gzip stream; Helm stores records gzipped, and reads
// ones that are not.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// decodeRecord reads a record as Helm's driver does.
func decodeRecord(data string) (*helmrelease.Release, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		if b, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var rls helmrelease.Release
	if err := json.Unmarshal(b, &rls); err != nil {
		return nil, err
	}
	return &rls, nil
}

// withoutSystemLabels drops the labels Helm's storage sets itself, as its
// driver does on a read.
func withoutSystemLabels(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		switch k {
		case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		default:
			out[k] = v
		}
	}
	return out
}
