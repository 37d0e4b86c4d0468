package stackserver

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// fakeServer answers as a stack server does, counting the requests.
func fakeServer(t *testing.T, healthy *atomic.Bool, requests *atomic.Int32) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/health", func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"status":"OK"}`))
	})
	mux.HandleFunc("/v1/version", func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"version":"0.7.1"}`))
	})
	mux.HandleFunc("/v1/providers", func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"data":[
		  {"api":"safety","provider_id":"llama-guard","provider_type":"inline::llama-guard","config":{"excluded_categories":[]},"health":{"status":"Not Implemented","message":"Provider does not implement health check"}},
		  {"api":"inference","provider_id":"vllm","provider_type":"remote::vllm","config":{ "url": "http://vllm:8000/v1", "api_token": "********" },"health":{"status":"OK","message":""}}
		]}`))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// answer asks the CR's server and waits for the background probe.
func answer(t *testing.T, p *Prober, uid types.UID, key, base string) Answer {
	t.Helper()
	info, known := p.Info(uid, key, base)
	if known && !p.Probing(uid) {
		return info
	}
	require.Eventually(t, func() bool { return !p.Probing(uid) }, 10*time.Second, time.Millisecond)
	info, known = p.Info(uid, key, base)
	require.True(t, known)
	return info
}

// The server's version, providers (sorted, config compacted) and health are
// read from its endpoints in the background; a CR's server is asked once
// per minute for the same Deployment generation, at once for another, and
// its answer read again once the minute has passed.
func TestServerProbe(t *testing.T) {
	var healthy atomic.Bool
	var requests atomic.Int32
	healthy.Store(true)
	srv := fakeServer(t, &healthy, &requests)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	p := NewProber(srv.Client())
	p.now = func() time.Time { return time.Unix(0, clock.Load()) }
	advance := func(d time.Duration) { clock.Add(int64(d)) }

	_, known := p.Info("uid-1", "1 "+srv.URL, srv.URL)
	assert.False(t, known, "nothing is known before the first answer")
	assert.True(t, p.Probing("uid-1"), "the probe runs in the background")
	info := answer(t, p, "uid-1", "1 "+srv.URL, srv.URL)
	assert.True(t, info.Healthy, info.Problem)
	assert.Equal(t, "0.7.1", info.Version)
	require.Len(t, info.Providers, 2)
	assert.Equal(t, Provider{API: "inference", ProviderID: "vllm", ProviderType: "remote::vllm",
		Config: info.Providers[0].Config, Health: Health{Status: "OK"}}, info.Providers[0])
	assert.Equal(t, `{"api_token":"********","url":"http://vllm:8000/v1"}`, string(info.Providers[0].Config), "compacted, keys sorted")
	assert.Equal(t, "Not Implemented", info.Providers[1].Health.Status)
	assert.Equal(t, int32(3), requests.Load())

	healthy.Store(false)
	advance(30 * time.Second)
	again, known := p.Info("uid-1", "1 "+srv.URL, srv.URL)
	assert.True(t, known)
	assert.Equal(t, info, again, "within a minute the last answer stands")
	assert.False(t, p.Probing("uid-1"), "nothing is asked within a minute")
	assert.Equal(t, int32(3), requests.Load())

	_, known = p.Info("uid-1", "2 "+srv.URL, srv.URL)
	assert.False(t, known, "an answer for another generation is not this one's")
	rolled := answer(t, p, "uid-1", "2 "+srv.URL, srv.URL)
	assert.False(t, rolled.Healthy)
	assert.Equal(t, "GET /v1/health: HTTP 503", rolled.Problem)
	assert.Equal(t, int32(6), requests.Load(), "a new generation is asked at once")

	advance(61 * time.Second)
	healthy.Store(true)
	stale, known := p.Info("uid-1", "2 "+srv.URL, srv.URL)
	assert.True(t, known)
	assert.False(t, stale.Healthy, "the last answer stands while the next one comes")
	assert.True(t, answer(t, p, "uid-1", "2 "+srv.URL, srv.URL).Healthy, "asked again after a minute")
	assert.Equal(t, int32(9), requests.Load())

	p.Forget("uid-1")
	answer(t, p, "uid-1", "2 "+srv.URL, srv.URL)
	assert.Equal(t, int32(12), requests.Load(), "a forgotten CR is asked again")
}

// A server that cannot be reached fails the health check in words that stay
// the same whatever the network says (a refused connection here), and the
// other endpoints are not asked.
func TestServerProbeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	info := answer(t, NewProber(nil), "uid", "1", url)
	assert.False(t, info.Healthy)
	assert.Equal(t, "GET /v1/health: no answer from the server over its Service", info.Problem)
	assert.Empty(t, info.Version)
	assert.Nil(t, info.Providers)
}

// A reconcile that found no answer is owed a pass once, even when the probe
// it started ends before it asks (a fast server on a loaded machine answers
// while the reconcile still writes its status: with only Probing, that
// reconcile saw no probe running, asked for no pass, and its status said
// "pods not ready" until something else changed; TestKilledMidFlight saw a
// LlamaStackDistribution stuck so under load). Not owed again after a pass
// that took the answer.
func TestAnAnswerIsOwedToTheReconcileThatFoundNone(t *testing.T) {
	var healthy atomic.Bool
	var requests atomic.Int32
	healthy.Store(true)
	srv := fakeServer(t, &healthy, &requests)
	p := NewProber(srv.Client())
	key := "1 " + srv.URL

	_, known := p.Info("uid-1", key, srv.URL)
	require.False(t, known)
	// The probe ends before the reconcile asks whether it is owed a pass.
	require.Eventually(t, func() bool { return !p.Probing("uid-1") }, 10*time.Second, time.Millisecond)
	assert.True(t, p.Owed("uid-1"), "the reconcile that found no answer comes back for it")
	assert.False(t, p.Owed("uid-1"), "owed once")

	// The pass it brings takes the answer: nothing more is owed.
	info, known := p.Info("uid-1", key, srv.URL)
	assert.True(t, known)
	assert.True(t, info.Healthy, info.Problem)
	assert.False(t, p.Owed("uid-1"), "an answered CR is not reconciled again")

	// A forgotten CR (deleted) is owed nothing.
	_, known = p.Info("uid-2", key, srv.URL)
	require.False(t, known)
	require.Eventually(t, func() bool { return !p.Probing("uid-2") }, 10*time.Second, time.Millisecond)
	p.Forget("uid-2")
	assert.False(t, p.Owed("uid-2"), "a forgotten CR is owed nothing")
}
