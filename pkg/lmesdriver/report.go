package lmesdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// JobStatus reports to the job's own status subresource, by a JSON merge
// patch of the driver's fields, through the pod's ServiceAccount (the
// operator binds it to a Role that may get and patch only this job's
// status).
type JobStatus struct {
	Client          rest.Interface
	Namespace, Name string
}

// NewJobStatus reports through cfg (the pod's in-cluster config).
func NewJobStatus(cfg *rest.Config, namespace, name string) (*JobStatus, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &lmv1alpha1.GroupVersion
	c.APIPath = "/apis"
	c.ContentType = "application/json"
	c.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	c.UserAgent = "lmes-driver"
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &JobStatus{Client: rc, Namespace: namespace, Name: name}, nil
}

// Report implements Reporter: a merge patch of status, retried a few times.
func (j *JobStatus) Report(ctx context.Context, s Status) error {
	body, err := json.Marshal(map[string]any{"status": patchOf(s)})
	if err != nil {
		return err
	}
	var last error
	for i := range 5 {
		if i > 0 {
			time.Sleep(time.Duration(i) * time.Second)
		}
		last = j.Client.Patch(types.MergePatchType).
			Namespace(j.Namespace).Resource("lmevaljobs").Name(j.Name).SubResource("status").
			Body(body).Do(ctx).Error()
		if last == nil {
			return nil
		}
		if apierrors.IsForbidden(last) || apierrors.IsNotFound(last) || apierrors.IsInvalid(last) || apierrors.IsUnauthorized(last) {
			break // no retry mends these
		}
	}
	return fmt.Errorf("patching the status of LMEvalJob %s/%s: %w", j.Namespace, j.Name, last)
}

// patchOf is the merge patch of the driver's fields: every one set, so that
// a field the status had (an earlier run's results) is replaced or removed.
// The driver never ends the job in the status: its final report carries the
// results and the message with the state still Running, and the end (state
// and reason) goes to the termination message, which only the kubelet
// publishes; the operator ends the job from there. (config/policy's
// lmevaljob_driver_status.yaml refuses a driver's status write that changes
// anything but these fields, or moves the state anywhere but to Running.)
func patchOf(s Status) map[string]any {
	state, reason := s.State, s.Reason
	if s.Final() {
		state, reason = lmv1alpha1.JobStateRunning, lmv1alpha1.ReasonNone
	}
	p := map[string]any{"state": state, "reason": reason, "message": s.Message, "progressBars": s.ProgressBars, "results": nil}
	if s.ProgressBars == nil {
		p["progressBars"] = nil
	}
	if s.Results != "" {
		p["results"] = s.Results
	}
	return p
}

// Termination writes the final status's state, reason and message (not the
// results) to the container's termination message file, where the operator
// reads it when the job's status was not patched (at most 4096 bytes).
type Termination struct{ Path string }

// MaxTerminationMessage is the kubelet's limit of a termination message.
const MaxTerminationMessage = 4096

// Report implements Reporter: only the final status is written.
func (t Termination) Report(_ context.Context, s Status) error {
	if !s.Final() {
		return nil
	}
	msg := s.Message
	for {
		b, err := json.Marshal(Status{State: s.State, Reason: s.Reason, Message: msg})
		if err != nil {
			return err
		}
		if len(b) <= MaxTerminationMessage {
			return os.WriteFile(t.Path, b, 0o644)
		}
		msg = msg[:len(msg)*3/4]
	}
}

// Server serves the status on loopback for `driver --get-status` (upstream's
// /GetStatus, with or without its double slash). Upstream's operator
// exec'd into the pod to ask it; this one never does: the server is for a
// person debugging the pod.
type Server struct {
	mu     sync.Mutex
	status Status
	ln     net.Listener
	srv    *http.Server
}

// Report implements Reporter.
func (s *Server) Report(_ context.Context, st Status) error {
	s.mu.Lock()
	s.status = st
	s.mu.Unlock()
	return nil
}

// Listen serves on 127.0.0.1:port.
func (s *Server) Listen(port int) error {
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimLeft(r.URL.Path, "/") {
		case "GetStatus":
			s.mu.Lock()
			b, err := json.Marshal(s.status)
			s.mu.Unlock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		case "Shutdown":
			// The driver exits by itself when the job ends.
			_, _ = w.Write([]byte(`{"msg": "ok"}`))
		default:
			http.NotFound(w, r)
		}
	})
	s.ln, s.srv = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// Serve ends with Close's ErrServerClosed; it has no one to tell.
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// Close stops serving.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// GetStatus asks a driver on 127.0.0.1:port for its status.
func GetStatus(ctx context.Context, port int) (Status, error) {
	var st Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/GetStatus", port), nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status server: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
