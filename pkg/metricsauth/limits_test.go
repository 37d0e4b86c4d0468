package metricsauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reviewer answers reviews in the process, as apiServer does over HTTP, and
// counts them; with a gate, each review waits for the gate to open, so that
// a test can hold reviews in flight.
type reviewer struct {
	users   map[string]authenticationv1.UserInfo // token -> user
	allowed map[string]bool                      // user -> may get /metrics
	gate    chan struct{}

	mu       sync.Mutex
	tokens   map[string]int // TokenReviews per token
	reviews  map[string]int // SubjectAccessReviews per user
	inFlight int
	peak     int
}

func newReviewer() *reviewer {
	return &reviewer{
		users: map[string]authenticationv1.UserInfo{
			"scraper-token": {Username: "prometheus"},
			"nobody-token":  {Username: "nobody"},
		},
		allowed: map[string]bool{"prometheus": true},
		tokens:  map[string]int{},
		reviews: map[string]int{},
	}
}

// enter counts a review in flight and waits for the gate.
func (r *reviewer) enter(ctx context.Context) (leave func(), err error) {
	r.mu.Lock()
	r.inFlight++
	r.peak = max(r.peak, r.inFlight)
	r.mu.Unlock()
	leave = func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			leave()
			return nil, ctx.Err()
		}
	}
	return leave, nil
}

// counts are the TokenReviews of a token, the SubjectAccessReviews of a
// user, the reviews in flight and their peak.
func (r *reviewer) counts(token, user string) (tokens, reviews, inFlight, peak int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tokens[token], r.reviews[user], r.inFlight, r.peak
}

type tokenReviews struct{ *reviewer }

func (r tokenReviews) Create(ctx context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	r.mu.Lock()
	r.tokens[tr.Spec.Token]++
	r.mu.Unlock()
	leave, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	out := tr.DeepCopy()
	if u, ok := r.users[tr.Spec.Token]; ok {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
	}
	return out, nil
}

type accessReviews struct{ *reviewer }

func (r accessReviews) Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	r.mu.Lock()
	r.reviews[sar.Spec.User]++
	r.mu.Unlock()
	leave, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	out := sar.DeepCopy()
	a := sar.Spec.NonResourceAttributes
	out.Status.Allowed = r.allowed[sar.Spec.User] && a.Path == "/metrics" && a.Verb == "get"
	return out, nil
}

// guarded is the metrics handler behind a Guard asking r.
func guarded(r *reviewer) http.Handler {
	g := New(tokenReviews{r}, accessReviews{r})
	return g.Wrap(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "metrics") }))
}

func serve(h http.Handler, method, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Requests with the same token, while its review is under way, wait for
// that review: a caller repeating one made-up token costs one TokenReview,
// not one per request.
func TestConcurrentRequestsWithOneTokenShareOneReview(t *testing.T) {
	const n = 50
	for _, c := range []struct {
		name, token, user string
		code, reviews     int
	}{
		{"a made-up token", "made-up", "", http.StatusUnauthorized, 0},
		{"the scraper's token", "scraper-token", "prometheus", http.StatusOK, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newReviewer()
				r.gate = make(chan struct{})
				open := sync.OnceFunc(func() { close(r.gate) })
				defer open()
				h := guarded(r)
				codes := make(chan int, n)
				for range n {
					go func() { codes <- serve(h, "GET", c.token).Code }()
				}
				synctest.Wait() // every request is waiting: for the API server, or for another request's review
				if tokens, _, inFlight, _ := r.counts(c.token, c.user); tokens != 1 || inFlight != 1 {
					t.Fatalf("%d requests started %d TokenReviews (%d in flight), want 1", n, tokens, inFlight)
				}
				open()
				for range n {
					if code := <-codes; code != c.code {
						t.Fatalf("%d, want %d", code, c.code)
					}
				}
				if tokens, reviews, _, _ := r.counts(c.token, c.user); tokens != 1 || reviews != c.reviews {
					t.Fatalf("%d TokenReviews and %d SubjectAccessReviews for %d requests, want 1 and %d", tokens, reviews, n, c.reviews)
				}
			})
		})
	}
}

// At most maxReviews reviews are in flight; a request that would need
// another is answered 429 at once, not queued.
func TestReviewsInFlightAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReviewer()
		r.gate = make(chan struct{})
		open := sync.OnceFunc(func() { close(r.gate) })
		defer open()
		h := guarded(r)
		const extra = 5
		recs := make(chan *httptest.ResponseRecorder, maxReviews+extra)
		for i := range maxReviews + extra {
			go func() { recs <- serve(h, "GET", fmt.Sprintf("made-up-%d", i)) }()
		}
		synctest.Wait()
		for range extra {
			select {
			case rec := <-recs:
				if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
					t.Fatalf("a request beyond the bound: %d (Retry-After %q), want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
				}
			default:
				t.Fatalf("a request beyond the bound waits for a review")
			}
		}
		if _, _, inFlight, peak := r.counts("", ""); inFlight != maxReviews || peak != maxReviews {
			t.Fatalf("%d reviews in flight (peak %d), want %d", inFlight, peak, maxReviews)
		}
		open()
		for range maxReviews {
			if rec := <-recs; rec.Code != http.StatusUnauthorized {
				t.Fatalf("a reviewed made-up token: %d, want 401", rec.Code)
			}
		}
		// The slots are free again: the scraper needs two reviews, one
		// after the other.
		if rec := serve(h, "GET", "scraper-token"); rec.Code != http.StatusOK {
			t.Fatalf("the scraper afterwards: %d, want 200", rec.Code)
		}
		if _, _, _, peak := r.counts("", ""); peak != maxReviews {
			t.Fatalf("peak %d reviews in flight, want %d", peak, maxReviews)
		}
	})
}

// A waiting request leaves when its own request ends; the review it waited
// for goes on for the others, even when the request that started it is gone.
func TestAReviewOutlivesTheRequestThatStartedIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReviewer()
		r.gate = make(chan struct{})
		open := sync.OnceFunc(func() { close(r.gate) })
		defer open()
		h := guarded(r)
		ctx, hangUp := context.WithCancel(context.Background())
		first := make(chan int, 1)
		go func() {
			req := httptest.NewRequest("GET", "/metrics", nil).WithContext(ctx)
			req.Header.Set("Authorization", "Bearer scraper-token")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			first <- rec.Code
		}()
		synctest.Wait()
		second := make(chan int, 1)
		go func() { second <- serve(h, "GET", "scraper-token").Code }()
		synctest.Wait()
		hangUp()
		open()
		<-first
		if code := <-second; code != http.StatusOK {
			t.Fatalf("a request waiting for a review whose requester hung up: %d, want 200", code)
		}
		if tokens, _, _, _ := r.counts("scraper-token", ""); tokens != 1 {
			t.Fatalf("%d TokenReviews, want 1", tokens)
		}
	})
}

// A flood of keys the API server turns down, more than a cache holds,
// pushes out only its own kind: the scraper stays cached throughout, with
// no review after its first.
func TestFloodsDoNotEvictTheScraper(t *testing.T) {
	for _, c := range []struct {
		name  string
		flood func(h http.Handler, i int) int // one request of the flood; its status
		code  int
	}{
		{"made-up tokens", func(h http.Handler, i int) int { return serve(h, "GET", fmt.Sprintf("made-up-%d", i)).Code }, http.StatusUnauthorized},
		{"made-up verbs of a user without the role", func(h http.Handler, i int) int { return serve(h, fmt.Sprintf("VERB%d", i), "nobody-token").Code }, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReviewer()
			h := guarded(r)
			for i := range 2*maxEntries + 10 {
				if i%500 == 0 { // the scraper scrapes meanwhile
					if code := serve(h, "GET", "scraper-token").Code; code != http.StatusOK {
						t.Fatalf("the scraper: %d, want 200", code)
					}
				}
				if code := c.flood(h, i); code != c.code {
					t.Fatalf("the flood: %d, want %d", code, c.code)
				}
			}
			if code := serve(h, "GET", "scraper-token").Code; code != http.StatusOK {
				t.Fatalf("the scraper after the flood: %d, want 200", code)
			}
			if tokens, reviews, _, _ := r.counts("scraper-token", "prometheus"); tokens != 1 || reviews != 1 {
				t.Fatalf("the scraper was reviewed again: %d TokenReviews and %d SubjectAccessReviews, want 1 and 1", tokens, reviews)
			}
		})
	}
}

func TestLRUDropsTheLeastRecentlyUsed(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	later := now.Add(time.Minute)
	for _, c := range []struct {
		name string
		ops  func(c *lru[string, int])
		want map[string]bool // key -> still cached
	}{
		{"the oldest goes", func(c *lru[string, int]) {
			c.put("a", 1, later)
			c.put("b", 2, later)
			c.put("c", 3, later)
			c.put("d", 4, later)
		}, map[string]bool{"a": false, "b": true, "c": true, "d": true}},
		{"a read keeps an entry", func(c *lru[string, int]) {
			c.put("a", 1, later)
			c.put("b", 2, later)
			c.put("c", 3, later)
			c.get("a", now)
			c.put("d", 4, later)
		}, map[string]bool{"a": true, "b": false, "c": true, "d": true}},
		{"a write keeps an entry and takes no room", func(c *lru[string, int]) {
			c.put("a", 1, later)
			c.put("b", 2, later)
			c.put("c", 3, later)
			c.put("a", 5, later)
			c.put("d", 4, later)
		}, map[string]bool{"a": true, "b": false, "c": true, "d": true}},
		{"an expired entry is not served, and leaves", func(c *lru[string, int]) {
			c.put("a", 1, now)
			c.put("b", 2, later)
		}, map[string]bool{"a": false, "b": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := newLRU[string, int](3)
			c.ops(cache)
			for k, want := range c.want {
				if _, got := cache.get(k, now); got != want {
					t.Errorf("%s cached: %v, want %v", k, got, want)
				}
			}
			if n := cache.len(); n > 3 {
				t.Errorf("%d entries, want at most 3", n)
			}
		})
	}
}
