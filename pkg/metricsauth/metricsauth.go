// Package metricsauth guards an HTTP endpoint (the operator's metrics) the
// way kube-rbac-proxy and controller-runtime's metrics filter do: the caller
// sends a bearer token, the API server says who it is (a TokenReview) and
// whether that user may send this verb to this path (a SubjectAccessReview
// with non-resource attributes), and only then is the request served.
//
// It answers as controller-runtime's filters.WithAuthenticationAndAuthorization
// does (401 without a valid token, 403 when the review denies, 500 when the
// API server cannot be asked) and caches the same way (a token's review for
// a minute, an allow for five, a deny for 30 s), but it needs only client-go:
// that filter links k8s.io/apiserver, and with it CEL and OpenTelemetry's
// gRPC exporters, about 10 MB of the binary that the process then maps.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// The cache lifetimes of controller-runtime's filter (and kube-apiserver's
// delegated authentication and authorization defaults).
const (
	tokenTTL = time.Minute
	allowTTL = 5 * time.Minute
	denyTTL  = 30 * time.Second
	timeout  = 10 * time.Second
	// maxEntries bounds each cache: a caller that sends a new token per
	// request costs a TokenReview each, not memory.
	maxEntries = 4096
)

// backoff retries a review the API server could not answer, as the API
// server's own webhook clients do (500 ms, x1.5, 5 tries).
var backoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// Guard authenticates and authorizes requests through the API server.
type Guard struct {
	tokens  authenticationclient.TokenReviewInterface
	reviews authorizationclient.SubjectAccessReviewInterface
	now     func() time.Time
	backoff wait.Backoff

	mu        sync.Mutex
	users     map[[sha256.Size]byte]userEntry
	decisions map[string]decisionEntry
}

type userEntry struct {
	user    *authenticationv1.UserInfo // nil: not authenticated
	expires time.Time
}

type decisionEntry struct {
	allowed bool
	reason  string
	expires time.Time
}

func (e userEntry) expiry() time.Time     { return e.expires }
func (e decisionEntry) expiry() time.Time { return e.expires }

// New returns a Guard that asks the API server through these clients.
func New(tokens authenticationclient.TokenReviewInterface, reviews authorizationclient.SubjectAccessReviewInterface) *Guard {
	return &Guard{
		tokens:    tokens,
		reviews:   reviews,
		now:       time.Now,
		backoff:   backoff,
		users:     map[[sha256.Size]byte]userEntry{},
		decisions: map[string]decisionEntry{},
	}
}

// Wrap serves next to the requests the API server lets through.
func (g *Guard) Wrap(log logr.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), timeout)
		defer cancel()
		token, ok := bearer(req.Header.Get("Authorization"))
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, err := g.authenticate(ctx, token)
		if err != nil {
			log.Error(err, "Authentication failed")
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		}
		if user == nil {
			log.V(4).Info("Authentication failed")
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		allowed, reason, err := g.authorize(ctx, user, strings.ToLower(req.Method), req.URL.Path)
		if err != nil {
			msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
			log.Error(err, msg)
			http.Error(w, msg, http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("Authorization denied for user %s", user.Username)
			log.V(4).Info(msg, "reason", reason)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// bearer is the token of an "Authorization: Bearer TOKEN" header, read as
// the API server reads it (the scheme in any case, one space, a token).
func bearer(header string) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(header), " ", 3)
	if len(parts) != 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// authenticate is the user a token belongs to; nil when the API server says
// it belongs to no one.
func (g *Guard) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	g.mu.Lock()
	e, ok := g.users[key]
	g.mu.Unlock()
	if ok && g.now().Before(e.expires) {
		return e.user, nil
	}
	var review *authenticationv1.TokenReview
	err := g.ask(ctx, func() error {
		var err error
		review, err = g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("TokenReview: %w", err)
	}
	var user *authenticationv1.UserInfo
	if review.Status.Authenticated {
		u := review.Status.User
		user = &u
	}
	g.mu.Lock()
	store(g.users, key, userEntry{user: user, expires: g.now().Add(tokenTTL)}, g.now())
	g.mu.Unlock()
	return user, nil
}

// authorize says whether user may send verb to path.
func (g *Guard) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:                  user.Username,
		UID:                   user.UID,
		Groups:                user.Groups,
		Extra:                 extra(user.Extra),
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}
	key := specKey(spec)
	g.mu.Lock()
	e, ok := g.decisions[key]
	g.mu.Unlock()
	if ok && g.now().Before(e.expires) {
		return e.allowed, e.reason, nil
	}
	var review *authorizationv1.SubjectAccessReview
	err := g.ask(ctx, func() error {
		var err error
		review, err = g.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	// Allowed and not explicitly denied; no opinion is a deny.
	allowed := review.Status.Allowed && !review.Status.Denied
	ttl := denyTTL
	if allowed {
		ttl = allowTTL
	}
	g.mu.Lock()
	store(g.decisions, key, decisionEntry{allowed: allowed, reason: review.Status.Reason, expires: g.now().Add(ttl)}, g.now())
	g.mu.Unlock()
	return allowed, review.Status.Reason, nil
}

// ask sends a review, again while the API server answers with a transient
// failure (unreachable, 429, 5xx).
func (g *Guard) ask(ctx context.Context, send func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, g.backoff, func(context.Context) (bool, error) {
		last = send()
		if last == nil {
			return true, nil
		}
		if !transient(last) {
			return false, last
		}
		return false, nil
	})
	if err != nil && last != nil && (wait.Interrupted(err) || errors.Is(err, context.DeadlineExceeded)) {
		return last
	}
	return err
}

// transient says whether asking again may help.
func transient(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == http.StatusTooManyRequests || code >= 500
	}
	return true // no answer at all: a connection error or a timeout
}

// store keeps e under key, first dropping expired entries when the cache is
// full, and everything when that frees nothing.
func store[K comparable, V interface{ expiry() time.Time }](m map[K]V, key K, v V, now time.Time) {
	if len(m) >= maxEntries {
		for k, old := range m {
			if !now.Before(old.expiry()) {
				delete(m, k)
			}
		}
		if len(m) >= maxEntries {
			clear(m)
		}
	}
	m[key] = v
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// specKey is a review's identity: every field of it, unambiguously.
func specKey(s authorizationv1.SubjectAccessReviewSpec) string {
	var b strings.Builder
	field := func(v string) { fmt.Fprintf(&b, "%d:%s;", len(v), v) }
	field(s.User)
	field(s.UID)
	fmt.Fprintf(&b, "%d;", len(s.Groups))
	for _, g := range s.Groups {
		field(g)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "%d;", len(keys))
	for _, k := range keys {
		field(k)
		fmt.Fprintf(&b, "%d;", len(s.Extra[k]))
		for _, v := range s.Extra[k] {
			field(v)
		}
	}
	field(s.NonResourceAttributes.Path)
	field(s.NonResourceAttributes.Verb)
	return b.String()
}
