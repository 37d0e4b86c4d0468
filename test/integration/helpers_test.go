package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"sync"
)

// releaseRecords lists Helm's release records of a CR: ConfigMaps in the
// operator's namespace.
func releaseRecords(t *testing.T, ns, name string) []corev1.ConfigMap {
	return releaseRecordsOf(t, "llsd", ns, name)
}

// releaseRecordsOf lists the release records of a CR of the kind whose
// release prefix is given.
func releaseRecordsOf(t *testing.T, prefix, ns, name string) []corev1.ConfigMap {
	t.Helper()
	list := &corev1.ConfigMapList{}
	require.NoError(t, k8s.List(context.Background(), list, client.InNamespace(operatorNamespace), client.MatchingLabels{"owner": "helm", "name": naming.ReleaseName(prefix, ns, name)}))
	return list.Items
}

// unstructuredObj lets a test send what typed clients cannot express.
type unstructuredObj = unstructured.Unstructured

// countingTransport counts the requests that are not reads, and the reads of
// Helm's release storage (one or more per reconcile).
type countingTransport struct {
	next                          http.RoundTripper
	writes, releaseReads, secrets *atomic.Int64
	// log, when set, records every request.
	log *requestLog
}

// requestLog records an operator's requests ("METHOD path?query"), so that
// a test can count its own CR's among those of earlier tests' CRs (which may
// still be reconciling or uninstalling, whatever order the tests run in).
type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) add(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, path)
}

// mark is where the log is now.
func (l *requestLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paths)
}

// writesAbout returns the writes since mark that concern the namespace:
// its objects and events, and its CRs' release records (named
// "<prefix>-<namespace>.<name>" in the operator's namespace).
func (l *requestLog) writesAbout(ns string, mark int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths[mark:] {
		if strings.HasPrefix(p, http.MethodGet+" ") {
			continue
		}
		if strings.Contains(p, "/namespaces/"+ns+"/") || strings.Contains(p, "-"+ns+".") {
			out = append(out, p)
		}
	}
	return out
}

// kindsOfWrites counts, among writesAbout's, the events and the creates of
// objects of the namespace (rendered or the CA bundle; not the release
// record, named "<prefix>-<namespace>.<name>"): a POST, or the server-side
// apply that creates a rendered object (force=true: the release client's).
func kindsOfWrites(writes []string, ns string) (events, creates int) {
	for _, w := range writes {
		switch {
		case strings.Contains(w, "/events"):
			events++
		case (strings.HasPrefix(w, "POST ") || strings.HasPrefix(w, "PATCH ") && strings.Contains(w, "force=true")) && !strings.Contains(w, "-"+ns+"."):
			creates++
		}
	}
	return events, creates
}

// releaseLists counts the lists of a release's records since mark: every
// reconcile of its CR sends at least one.
// waitReconciles waits until the release's records were listed n times
// since mark: n reconciles of its CR, however busy the machine is.
func (l *requestLog) waitReconciles(t *testing.T, release string, mark, n int) {
	t.Helper()
	env.Eventually(t, fmt.Sprintf("%d reconciles of %s", n, release), func() error {
		if got := l.releaseLists(release, mark); got < n {
			return fmt.Errorf("%d so far", got)
		}
		return nil
	})
}

func (l *requestLog) releaseLists(release string, mark int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, p := range l.paths[mark:] {
		if strings.HasPrefix(p, http.MethodGet+" ") && strings.Contains(p, "name%3D"+release) {
			n++
		}
	}
	return n
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A TrustyAIService in DATABASE mode looks up the metadata of Secret
	// <name>-db-ca by name; any other request about Secrets is counted.
	dbCA := req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "-db-ca") && strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata")
	if c.secrets != nil && strings.Contains(req.URL.Path, "/secrets") && !dbCA {
		c.secrets.Add(1)
	}
	if c.log != nil {
		c.log.add(req.Method + " " + req.URL.Path + "?" + req.URL.RawQuery)
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		c.writes.Add(1)
		if os.Getenv("TEST_VERBOSE") != "" {
			fmt.Fprintf(os.Stderr, "operator write: %s %s\n", req.Method, req.URL.Path)
		}
	} else if strings.HasSuffix(req.URL.Path, "/configmaps") && strings.Contains(req.URL.RawQuery, "owner%3Dhelm") {
		c.releaseReads.Add(1)
	}
	return c.next.RoundTrip(req)
}
