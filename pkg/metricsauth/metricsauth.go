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
//
// Anyone who reaches the port can send tokens, so a request must not cost
// the API server more than the caller's own work: at most maxReviews
// reviews are in flight (a request that would need one more is answered
// 429 at once), requests with the same token wait for one review rather than
// each asking, and the caches drop the entry used longest ago when full,
// with tokens the API server does not know kept apart from those it does:
// a flood of made-up tokens pushes out only other made-up tokens, never the
// scraper's. Serving (serving.go) turns HTTP/2 off unless asked and serves a
// mounted certificate instead of a self-signed one.
package metricsauth

import (
	"container/list"
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
	// maxReviews bounds the reviews in flight, TokenReviews and
	// SubjectAccessReviews together. A review takes the API server a few
	// milliseconds, so this is hundreds a second for the few scrapers there
	// are; beyond it a flood of tokens is answered 429 without asking, and
	// costs the API server no more than this many requests at a time.
	maxReviews = 8
)

// errBusy: maxReviews reviews are in flight already.
var errBusy = errors.New("too many reviews in flight")

// backoff retries a review the API server could not answer, as the API
// server's own webhook clients do (500 ms, x1.5, 5 tries).
var backoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// Guard authenticates and authorizes requests through the API server.
type Guard struct {
	tokens  authenticationclient.TokenReviewInterface
	reviews authorizationclient.SubjectAccessReviewInterface
	now     func() time.Time
	backoff wait.Backoff

	// slots holds a token per review in flight (a semaphore).
	slots chan struct{}
	// users are the tokens the API server authenticated, strangers those it
	// did not: apart, so that made-up tokens never push out real ones.
	users     *lru[[sha256.Size]byte, *authenticationv1.UserInfo]
	strangers *lru[[sha256.Size]byte, struct{}]
	// allows and denies are decisions (their reasons) by specKey, apart for
	// the same reason: a user sending made-up verbs pushes out only denies.
	allows, denies *lru[string, string]
	// One review per token, and per SubjectAccessReview, at a time.
	authentications flights[[sha256.Size]byte, *authenticationv1.UserInfo]
	authorizations  flights[string, decision]
}

type decision struct {
	allowed bool
	reason  string
}

// New returns a Guard that asks the API server through these clients.
func New(tokens authenticationclient.TokenReviewInterface, reviews authorizationclient.SubjectAccessReviewInterface) *Guard {
	return &Guard{
		tokens:    tokens,
		reviews:   reviews,
		now:       time.Now,
		backoff:   backoff,
		slots:     make(chan struct{}, maxReviews),
		users:     newLRU[[sha256.Size]byte, *authenticationv1.UserInfo](maxEntries),
		strangers: newLRU[[sha256.Size]byte, struct{}](maxEntries),
		allows:    newLRU[string, string](maxEntries),
		denies:    newLRU[string, string](maxEntries),
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
		if errors.Is(err, errBusy) {
			busy(log, w)
			return
		}
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
		if errors.Is(err, errBusy) {
			busy(log, w)
			return
		}
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

// busy answers a request that would need a review beyond maxReviews, as
// the API server answers one beyond its max-requests-inflight: 429, try
// again in a second. Quietly: logging each would let a flood fill the log.
func busy(log logr.Logger, w http.ResponseWriter) {
	log.V(4).Info("Too many reviews in flight")
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too many requests", http.StatusTooManyRequests)
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
	if user, ok := g.cachedUser(key); ok {
		return user, nil
	}
	return g.authentications.do(ctx, key, func() (*authenticationv1.UserInfo, error) {
		// A flight for this token may have ended since the look-up above.
		if user, ok := g.cachedUser(key); ok {
			return user, nil
		}
		release, err := g.acquire()
		if err != nil {
			return nil, err
		}
		defer release()
		ctx, cancel := detach(ctx)
		defer cancel()
		var review *authenticationv1.TokenReview
		err = g.ask(ctx, func() error {
			var err error
			review, err = g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("TokenReview: %w", err)
		}
		expires := g.now().Add(tokenTTL)
		if !review.Status.Authenticated {
			g.strangers.put(key, struct{}{}, expires)
			return nil, nil
		}
		user := review.Status.User
		g.users.put(key, &user, expires)
		return &user, nil
	})
}

// cachedUser is a token's cached review: its user, nil for a token the API
// server did not know, and whether there is one.
func (g *Guard) cachedUser(key [sha256.Size]byte) (*authenticationv1.UserInfo, bool) {
	now := g.now()
	if user, ok := g.users.get(key, now); ok {
		return user, true
	}
	if _, ok := g.strangers.get(key, now); ok {
		return nil, true
	}
	return nil, false
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
	if d, ok := g.cachedDecision(key); ok {
		return d.allowed, d.reason, nil
	}
	d, err := g.authorizations.do(ctx, key, func() (decision, error) {
		if d, ok := g.cachedDecision(key); ok {
			return d, nil
		}
		release, err := g.acquire()
		if err != nil {
			return decision{}, err
		}
		defer release()
		ctx, cancel := detach(ctx)
		defer cancel()
		var review *authorizationv1.SubjectAccessReview
		err = g.ask(ctx, func() error {
			var err error
			review, err = g.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return decision{}, fmt.Errorf("SubjectAccessReview: %w", err)
		}
		// Allowed and not explicitly denied; no opinion is a deny.
		d := decision{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason}
		if d.allowed {
			g.allows.put(key, d.reason, g.now().Add(allowTTL))
		} else {
			g.denies.put(key, d.reason, g.now().Add(denyTTL))
		}
		return d, nil
	})
	return d.allowed, d.reason, err
}

// cachedDecision is a review's cached decision, and whether there is one.
func (g *Guard) cachedDecision(key string) (decision, bool) {
	now := g.now()
	if reason, ok := g.allows.get(key, now); ok {
		return decision{allowed: true, reason: reason}, true
	}
	if reason, ok := g.denies.get(key, now); ok {
		return decision{reason: reason}, true
	}
	return decision{}, false
}

// acquire takes a slot for a review, or says errBusy at once: a request
// that queued instead would hold its connection and memory while a flood
// waits its turn.
func (g *Guard) acquire() (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	default:
		return nil, errBusy
	}
}

// detach is the context of a review others may be waiting for: it ends at
// the request's deadline, not when the request is cancelled (a scraper that
// hangs up must not fail the requests waiting for the same answer).
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
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

// lru keeps at most max entries, each until it expires. A full one drops
// the entry used longest ago, never all of them: a legitimate scraper's
// entry, read at every scrape, outlives a flood of keys read once each.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order list.List // of *lruEntry[K, V], the most recently used first
	m     map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key     K
	v       V
	expires time.Time
}

func newLRU[K comparable, V any](capacity int) *lru[K, V] {
	return &lru[K, V]{max: capacity, m: map[K]*list.Element{}}
}

// get is the value under key until it expires; reading it makes it the
// most recently used.
func (c *lru[K, V]) get(key K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.m[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*lruEntry[K, V])
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.m, key)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.v, true
}

// put keeps v under key until expires, dropping the least recently used
// entry when the cache is full.
func (c *lru[K, V]) put(key K, v V, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		e := el.Value.(*lruEntry[K, V])
		e.v, e.expires = v, expires
		c.order.MoveToFront(el)
		return
	}
	if c.order.Len() >= c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.m, oldest.Value.(*lruEntry[K, V]).key)
	}
	c.m[key] = c.order.PushFront(&lruEntry[K, V]{key: key, v: v, expires: expires})
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// flights runs one call per key at a time: a caller that finds one under
// way waits for its answer rather than asking the API server again, as
// golang.org/x/sync/singleflight does, except that a waiter leaves when its
// own request ends.
type flights[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*flight[V]
}

type flight[V any] struct {
	done chan struct{} // closed when v and err are set
	v    V
	err  error
}

// errAbandoned: the call panicked (the panic goes on in its own caller).
var errAbandoned = errors.New("the review was abandoned")

func (f *flights[K, V]) do(ctx context.Context, key K, call func() (V, error)) (V, error) {
	f.mu.Lock()
	if c, ok := f.m[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.v, c.err
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
	}
	if f.m == nil {
		f.m = map[K]*flight[V]{}
	}
	c := &flight[V]{done: make(chan struct{}), err: errAbandoned}
	f.m[key] = c
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.m, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.v, c.err = call()
	return c.v, c.err
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
