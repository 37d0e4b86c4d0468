package metricsauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiServer answers TokenReviews and SubjectAccessReviews as an API server
// would, from tables; the real one is exercised in test/cluster.
type apiServer struct {
	mu      sync.Mutex
	users   map[string]authenticationv1.UserInfo // token -> user
	allowed map[string]bool                      // user -> may get /metrics
	fail    int                                  // answer this many reviews with fail code first
	code    int
	tokens  []string
	reviews []authorizationv1.SubjectAccessReviewSpec
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail > 0 {
		a.fail--
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"message":"injected"}`, a.code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
		tr := &authenticationv1.TokenReview{}
		_ = json.NewDecoder(r.Body).Decode(tr)
		a.tokens = append(a.tokens, tr.Spec.Token)
		if u, ok := a.users[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
		} else {
			tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		_ = json.NewEncoder(w).Encode(tr)
	case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
		sar := &authorizationv1.SubjectAccessReview{}
		_ = json.NewDecoder(r.Body).Decode(sar)
		a.reviews = append(a.reviews, sar.Spec)
		a2 := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = a.allowed[sar.Spec.User] && a2 != nil && a2.Path == "/metrics" && a2.Verb == "get"
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC policy matched"
		}
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

func (a *apiServer) counts() (int, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tokens), len(a.reviews)
}

type fixture struct {
	api   *apiServer
	guard *Guard
	h     http.Handler
	now   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	api := &apiServer{
		users: map[string]authenticationv1.UserInfo{
			"scraper-token": {Username: "system:serviceaccount:monitoring:prometheus", UID: "u1", Groups: []string{"system:serviceaccounts"}, Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"prometheus-0"}}},
			"nobody-token":  {Username: "system:serviceaccount:default:nobody", UID: "u2"},
		},
		allowed: map[string]bool{"system:serviceaccount:monitoring:prometheus": true},
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{api: api, now: time.Unix(1_800_000_000, 0)}
	f.guard = New(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews())
	f.guard.now = func() time.Time { return f.now }
	f.guard.backoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}
	f.h = f.guard.Wrap(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "metrics") }))
	return f
}

func (f *fixture) get(t *testing.T, method, path, authorization string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestRequestsAreAuthenticatedThenAuthorized(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name, method, path, auth string
		code                     int
	}{
		{"no header", "GET", "/metrics", "", http.StatusUnauthorized},
		{"another scheme", "GET", "/metrics", "Basic scraper-token", http.StatusUnauthorized},
		{"no token", "GET", "/metrics", "Bearer", http.StatusUnauthorized},
		{"blank token", "GET", "/metrics", "Bearer   ", http.StatusUnauthorized},
		{"two tokens", "GET", "/metrics", "Bearer scraper-token other", http.StatusUnauthorized},
		{"unknown token", "GET", "/metrics", "Bearer " + strings.Repeat("x", 4096), http.StatusUnauthorized},
		{"a user without the role", "GET", "/metrics", "Bearer nobody-token", http.StatusForbidden},
		{"the scraper", "GET", "/metrics", "Bearer scraper-token", http.StatusOK},
		{"the scheme in another case", "GET", "/metrics", "bEaReR scraper-token", http.StatusOK},
		{"the scraper, another verb", "POST", "/metrics", "Bearer scraper-token", http.StatusForbidden},
		{"the scraper, another path", "GET", "/debug/pprof/", "Bearer scraper-token", http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := f.get(t, c.method, c.path, c.auth)
			if code != c.code {
				t.Fatalf("%d %q, want %d", code, body, c.code)
			}
			if (code == http.StatusOK) != (body == "metrics") {
				t.Fatalf("body %q with %d", body, code)
			}
		})
	}
	// The review carries everything the TokenReview said about the user.
	f.api.mu.Lock()
	defer f.api.mu.Unlock()
	var got *authorizationv1.SubjectAccessReviewSpec
	for i := range f.api.reviews {
		if f.api.reviews[i].User == "system:serviceaccount:monitoring:prometheus" {
			got = &f.api.reviews[i]
			break
		}
	}
	if got == nil {
		t.Fatal("no SubjectAccessReview for the scraper")
	}
	if got.UID != "u1" || len(got.Groups) != 1 || got.Groups[0] != "system:serviceaccounts" ||
		len(got.Extra["authentication.kubernetes.io/pod-name"]) != 1 || got.NonResourceAttributes == nil ||
		got.NonResourceAttributes.Path != "/metrics" || got.NonResourceAttributes.Verb != "get" || got.ResourceAttributes != nil {
		t.Fatalf("review %+v", got)
	}
}

func TestReviewsAreCachedForTheirLifetimes(t *testing.T) {
	f := newFixture(t)
	expect := func(step string, code, tokens, reviews int, auth string) {
		t.Helper()
		if got, _ := f.get(t, "GET", "/metrics", auth); got != code {
			t.Fatalf("%s: %d, want %d", step, got, code)
		}
		if gt, gr := f.api.counts(); gt != tokens || gr != reviews {
			t.Fatalf("%s: %d TokenReviews and %d SubjectAccessReviews, want %d and %d", step, gt, gr, tokens, reviews)
		}
	}
	expect("first scrape", 200, 1, 1, "Bearer scraper-token")
	expect("second scrape", 200, 1, 1, "Bearer scraper-token")
	f.now = f.now.Add(tokenTTL + time.Second)
	expect("after the token's lifetime", 200, 2, 1, "Bearer scraper-token")
	f.now = f.now.Add(allowTTL)
	expect("after the allow's lifetime", 200, 3, 2, "Bearer scraper-token")

	expect("a denied user", 403, 4, 3, "Bearer nobody-token")
	expect("a denied user again", 403, 4, 3, "Bearer nobody-token")
	f.now = f.now.Add(denyTTL + time.Second)
	f.api.mu.Lock()
	f.api.allowed["system:serviceaccount:default:nobody"] = true // granted meanwhile
	f.api.mu.Unlock()
	expect("after the deny's lifetime", 200, 4, 4, "Bearer nobody-token")

	expect("an unknown token", 401, 5, 4, "Bearer stolen")
	expect("an unknown token again", 401, 5, 4, "Bearer stolen")
	f.now = f.now.Add(tokenTTL)
	expect("an unknown token after its lifetime", 401, 6, 4, "Bearer stolen")
}

func TestTransientFailuresAreRetriedAndOthersAreNot(t *testing.T) {
	f := newFixture(t)
	f.api.fail, f.api.code = 2, http.StatusServiceUnavailable
	if code, body := f.get(t, "GET", "/metrics", "Bearer scraper-token"); code != http.StatusOK {
		t.Fatalf("after two 503s: %d %q, want 200", code, body)
	}
	// The operator may lack the RBAC for reviews: a 403 from the API server
	// is its answer, not the caller's fault, and asking again does not help.
	f = newFixture(t)
	f.api.fail, f.api.code = 1, http.StatusForbidden
	if code, _ := f.get(t, "GET", "/metrics", "Bearer scraper-token"); code != http.StatusInternalServerError {
		t.Fatalf("a refused TokenReview: %d, want 500", code)
	}
	if code, _ := f.get(t, "GET", "/metrics", "Bearer scraper-token"); code != http.StatusOK {
		t.Fatalf("a failure is not cached: %d, want 200", code)
	}
	// An API server that never answers well gives up after the backoff.
	f = newFixture(t)
	f.api.fail, f.api.code = 100, http.StatusInternalServerError
	if code, _ := f.get(t, "GET", "/metrics", "Bearer scraper-token"); code != http.StatusInternalServerError {
		t.Fatalf("no answer: %d, want 500", code)
	}
	if left := f.api.fail; left != 100-f.guard.backoff.Steps {
		t.Fatalf("%d tries, want %d", 100-left, f.guard.backoff.Steps)
	}
}

func TestCachesAreBounded(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < maxEntries+10; i++ {
		f.get(t, "GET", "/metrics", fmt.Sprintf("Bearer token-%d", i))
	}
	if n := f.guard.strangers.len(); n > maxEntries {
		t.Fatalf("%d cached unknown tokens, want at most %d", n, maxEntries)
	}
}

func TestSpecKeysDoNotCollide(t *testing.T) {
	specs := []authorizationv1.SubjectAccessReviewSpec{
		{User: "a", Groups: []string{"b"}},
		{User: "a;b"},
		{User: "a", Groups: []string{"b", "c"}},
		{User: "a", Groups: []string{"b;c"}},
		{User: "a", Extra: map[string]authorizationv1.ExtraValue{"b": {"c"}}},
		{User: "a", Extra: map[string]authorizationv1.ExtraValue{"b": {}}, Groups: []string{"c"}},
		{User: "a", UID: "b"},
	}
	seen := map[string]int{}
	for i, s := range specs {
		s.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}
		k := specKey(s)
		if j, dup := seen[k]; dup {
			t.Fatalf("specs %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
}
