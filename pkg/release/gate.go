package release

import (
	"bytes"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/postrender"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// gate is the last step between a rendered manifest and the cluster, run by
// Helm as a post-renderer on every install and upgrade. It checks the
// manifest against the chart's policy (namespace, declared kinds), lets the
// owner-reference post-renderer run, checks the result again (what Helm
// applies is what that step re-serialised), and refuses the whole manifest
// when an object of one of its names exists that the operator did not create.
// A refusal fails the Helm action before anything is applied or recorded.
type gate struct {
	cfg       *action.Configuration
	policy    guard.Policy
	ownership guard.Ownership
	// next is the post-renderer Helm would have run (owner references).
	next postrender.PostRenderer
}

var _ postrender.PostRenderer = (*gate)(nil)

// Run implements postrender.PostRenderer.
func (g *gate) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	if _, err := guard.Check(in.String(), g.policy); err != nil {
		return nil, err
	}
	out := in
	if g.next != nil {
		var err error
		if out, err = g.next.Run(in); err != nil {
			return nil, err
		}
	}
	if _, err := guard.Check(out.String(), g.policy); err != nil {
		return nil, err
	}
	if _, err := checkOwnership(g.cfg, out.String(), g.ownership); err != nil {
		return nil, err
	}
	return out, nil
}

// liveObject is an object of a manifest and its live state (nil when absent).
type liveObject struct {
	info     *resource.Info
	existing runtime.Object
}

func (l liveObject) ref() string {
	return l.info.Mapping.GroupVersionKind.Kind + " " + l.info.Namespace + "/" + l.info.Name
}

// checkOwnership reads every object of a manifest from the API server and
// returns them with their live state, or a *guard.Conflict for the first one
// that exists and is not the operator's for this release and CR.
func checkOwnership(cfg *action.Configuration, manifest string, own guard.Ownership) ([]liveObject, error) {
	infos, err := cfg.KubeClient.Build(bytes.NewBufferString(manifest), false)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var out []liveObject
	err = infos.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		l, conflict, err := readLive(info, own)
		switch {
		case err != nil:
			return err
		case conflict != nil:
			return conflict
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// readLive reads the live state of one object of a manifest (existing is nil
// when it does not exist) and checks that it is the operator's: conflict is
// the *guard.Conflict of an object that exists and is not.
func readLive(info *resource.Info, own guard.Ownership) (l liveObject, conflict, err error) {
	l = liveObject{info: info}
	existing, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	switch {
	case apierrors.IsNotFound(err):
		return l, nil, nil
	case err != nil:
		return l, nil, fmt.Errorf("read %s: %w", l.ref(), err)
	}
	m, err := meta.Accessor(existing)
	if err != nil {
		return l, nil, err
	}
	l.existing = existing
	return l, own.Check(l.ref(), m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences()), nil
}

// asUserError finds a problem the user fixes in err's chain (Helm wraps
// post-renderer errors): a guard violation or a name conflict, or an API
// server refusal of a rendered object (422), which is an invalid spec (the
// CR asks for an object Kubernetes does not accept). It returns nil for
// anything else, which is retried.
func asUserError(err error) *status.Failure {
	var v *guard.Violation
	if errors.As(err, &v) {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: v.Error()}
	}
	var c *guard.Conflict
	if errors.As(err, &c) {
		return &status.Failure{Reason: status.ReasonNameConflict, Message: c.Error()}
	}
	var f *status.Failure
	if errors.As(err, &f) {
		return f
	}
	if apierrors.IsInvalid(err) {
		return &status.Failure{Reason: status.ReasonInvalidSpec, Message: "the API server refused an object rendered from the spec: " + err.Error()}
	}
	return nil
}
