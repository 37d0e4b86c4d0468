// Package stackserver asks a running stack server (the OGX server and its
// predecessors share the API: /v1/health, /v1/version, /v1/providers) what
// it says of itself, for the status of the kinds that run one.
package stackserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// What a running server says of itself, for the status: its version
// (/v1/version), its providers and their health (/v1/providers) and its own
// health (/v1/health), read over its Service as upstream's operator reads
// them. Each CR's server is asked at most once per probeEvery, and only
// while its pods are ready for the Deployment's current generation.
//
// A probe runs in the background, never in a reconcile: a server (or a
// resolver) that does not answer would hold a reconcile worker for the
// requests' timeouts. A reconcile takes the last answer, starts a probe when
// that one is stale, and comes back once it is done (the kind's Recheck); until
// there is an answer for the current generation the condition stays as it
// was. Between probes the last answer stands, so an unchanged server causes
// no status write. The HTTP client is the operator's
// (release.Deps.HTTPClient): tests hand it a transport that reaches a
// server of their own.
const (
	// probeEvery bounds how often one CR's server is asked.
	probeEvery = time.Minute
	// probeTimeout bounds each request.
	probeTimeout = 5 * time.Second
	// Recheck is how soon a CR whose probe runs is reconciled again.
	Recheck = 2 * time.Second
	// maxAnswer bounds what is read of an answer.
	maxAnswer = 1 << 20
	// maxProviderConfig is the largest provider configuration kept in status.
	maxProviderConfig = 4 << 10
	// maxProviders is the most providers kept in status.
	maxProviders = 256
	// maxProbed bounds the CRs whose last answer is remembered.
	maxProbed = 16384
	// maxInFlight bounds the probes running at once.
	maxInFlight = 16
)

// Answer is one probe's answer.
type Answer struct {
	// Version is the server's version; "" when it did not say.
	Version string
	// Providers are its providers, sorted by API and id; nil when it did not say.
	Providers []Provider
	// Healthy is true when /v1/health answered OK; Problem says why not.
	Healthy bool
	Problem string
}

// Provider is one provider as the server describes it.
type Provider struct {
	API, ProviderID, ProviderType string
	// Config is the provider's configuration as compact JSON with sorted
	// keys; {} when it was absent, not an object or too large.
	Config []byte
	Health Health
}

// Health is a provider's health.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Prober asks servers in the background and remembers their answers.
type Prober struct {
	client *http.Client
	now    func() time.Time
	// slots bounds the probes in flight.
	slots    chan struct{}
	mu       sync.Mutex
	last     map[types.UID]probed
	inFlight map[types.UID]bool
	// owed marks the CRs whose last Info found no answer for their key:
	// the reconcile that asked is owed a pass once the probe is done, even
	// when the probe ends before the reconcile asks Owed.
	owed map[types.UID]bool
}

type probed struct {
	at time.Time
	// key is what the answer was read for (the Deployment's generation and
	// the server's URL): an answer for another key is not this one's.
	key  string
	info Answer
}

func NewProber(client *http.Client) *Prober {
	if client == nil {
		client = &http.Client{Timeout: probeTimeout, Transport: Transport()}
	}
	return &Prober{client: client, now: time.Now, slots: make(chan struct{}, maxInFlight), last: map[types.UID]probed{}, inFlight: map[types.UID]bool{}, owed: map[types.UID]bool{}}
}

// Info is the last answer of the CR's server for key, if there is one
// (known); when there is none, or it is older than probeEvery, a probe
// starts in the background (one per CR at a time).
func (p *Prober) Info(uid types.UID, key, base string) (info Answer, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.last[uid]
	known = ok && l.key == key
	if !known {
		p.owed[uid] = true
	}
	if known && p.now().Sub(l.at) < probeEvery {
		return l.info, true
	}
	if !p.inFlight[uid] {
		p.inFlight[uid] = true
		go p.probe(uid, key, base)
	}
	return l.info, known
}

// probe asks the server and stores its answer.
func (p *Prober) probe(uid types.UID, key, base string) {
	p.slots <- struct{}{}
	info := p.ask(context.Background(), base)
	<-p.slots
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, uid)
	if len(p.last) >= maxProbed {
		clear(p.last)
	}
	p.last[uid] = probed{at: p.now(), key: key, info: info}
}

// Probing says whether a probe of the CR's server runs.
func (p *Prober) Probing(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inFlight[uid]
}

// Owed says whether the CR must be reconciled again to take an answer: a
// probe of its server runs, or its last Info found none for its key (the
// probe that Info started may have ended already: a fast server answers
// before the reconcile that asked has written its status, and that status
// would otherwise stand with no answer until something else changes).
// It is owed once: the pass it brings asks Info again.
func (p *Prober) Owed(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	owed := p.owed[uid]
	delete(p.owed, uid)
	return owed || p.inFlight[uid]
}

// Forget drops a CR's answer (it is gone).
func (p *Prober) Forget(uid types.UID) {
	p.mu.Lock()
	delete(p.last, uid)
	delete(p.owed, uid)
	p.mu.Unlock()
}

// ask reads the three endpoints.
func (p *Prober) ask(ctx context.Context, base string) Answer {
	var info Answer
	var health struct {
		Status string `json:"status"`
	}
	switch err := p.get(ctx, base+"/v1/health", &health); {
	case errors.Is(err, errNoAnswer):
		// The others would not answer either.
		info.Problem = err.Error()
		return info
	case err != nil:
		info.Problem = err.Error()
	case !strings.EqualFold(health.Status, "OK"):
		info.Problem = fmt.Sprintf("GET /v1/health: status %q", health.Status)
	default:
		info.Healthy = true
	}
	var version struct {
		Version string `json:"version"`
	}
	if err := p.get(ctx, base+"/v1/version", &version); err == nil {
		info.Version = version.Version
	}
	var providers struct {
		Data []struct {
			API          string          `json:"api"`
			ProviderID   string          `json:"provider_id"`
			ProviderType string          `json:"provider_type"`
			Config       json.RawMessage `json:"config"`
			Health       json.RawMessage `json:"health"`
		} `json:"data"`
	}
	if err := p.get(ctx, base+"/v1/providers", &providers); err == nil {
		info.Providers = []Provider{}
		for _, d := range providers.Data {
			pi := Provider{API: d.API, ProviderID: d.ProviderID, ProviderType: d.ProviderType, Config: []byte("{}"), Health: providerHealth(d.Health)}
			if len(d.Config) > 0 && len(d.Config) <= maxProviderConfig && d.Config[0] == '{' {
				pi.Config = compactJSON(d.Config)
			}
			info.Providers = append(info.Providers, pi)
		}
		sort.SliceStable(info.Providers, func(i, j int) bool {
			a, b := info.Providers[i], info.Providers[j]
			if a.API != b.API {
				return a.API < b.API
			}
			return a.ProviderID < b.ProviderID
		})
		if len(info.Providers) > maxProviders {
			info.Providers = info.Providers[:maxProviders]
		}
	}
	return info
}

// providerHealth reads a provider's health: an object with status and
// message (some servers send a bare status string).
func providerHealth(raw json.RawMessage) Health {
	var h Health
	if err := json.Unmarshal(raw, &h); err == nil {
		return h
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return Health{Status: s}
	}
	return h
}

// compactJSON is raw without insignificant space, so that the status is
// the same for the same configuration however the server spaced it; raw
// when it is not JSON.
func compactJSON(raw json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, err := json.Marshal(v) // sorted keys
	if err != nil {
		return raw
	}
	return b
}

// get reads one endpoint's JSON answer into out. Its error says what
// happened in words that stay the same while the cause does: the
// condition's message changes, and the status is written, only when the
// cause does.
func (p *Prober) get(ctx context.Context, url string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", req.URL.Path, errNoAnswer)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("GET %s: %w", req.URL.Path, errNoAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", req.URL.Path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON expected", req.URL.Path)
	}
	return nil
}

// errNoAnswer is a request that got no answer: the name did not resolve,
// the connection was refused, or nothing came back in time. One error for
// all of them: a resolver's timeout and its "no such host" alternate for the
// same unreachable server, and the message must not.
var errNoAnswer = errors.New("no answer from the server over its Service")

// Transport reaches the servers. A server with TLS of its own
// presents a certificate of the
// user's, whose CA the operator does not know: its certificate is not
// verified, as the kubelet's probes do not verify it. Nothing is sent but
// three GETs without credentials, and what comes back only fills status
// (server version, providers, HealthCheck).
func Transport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // see above
	return t
}
