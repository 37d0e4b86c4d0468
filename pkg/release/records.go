package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"strconv"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// records is Helm's ConfigMaps storage driver with its writes encoded by
// pooled gzip writers. Helm allocates a compressor (about 800 KB at its
// best compression) for every record it writes, two per upgrade: an eighth
// of what the operator allocated in a soak (go tool pprof
// -sample_index=alloc_space). What is stored is byte for byte what Helm
// stores (TestRecordsAreHelms), and Helm reads it.
type records struct {
	*driver.ConfigMaps
	impl corev1client.ConfigMapInterface
}

func newRecords(impl corev1client.ConfigMapInterface) *records {
	return &records{ConfigMaps: driver.NewConfigMaps(impl), impl: impl}
}

// Create stores a new record; ErrReleaseExists when one has its key.
func (r *records) Create(key string, rls *release.Release) error {
	obj, err := recordObject(key, rls, "createdAt")
	if err != nil {
		return err
	}
	if _, err := r.impl.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return err
	}
	return nil
}

// Update replaces a stored record.
func (r *records) Update(key string, rls *release.Release) error {
	obj, err := recordObject(key, rls, "modifiedAt")
	if err != nil {
		return err
	}
	_, err = r.impl.Update(context.Background(), obj, metav1.UpdateOptions{})
	return err
}

// recordObject is the ConfigMap Helm's driver stores for rls: the release
// as base64 of gzip (best compression) of JSON, its labels and Helm's own,
// and the time of the write under stamp.
func recordObject(key string, rls *release.Release, stamp string) (*corev1.ConfigMap, error) {
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

func encodeRecord(rls *release.Release) (string, error) {
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
