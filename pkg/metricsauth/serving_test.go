package metricsauth

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certutil "k8s.io/client-go/util/cert"
)

// keyPairPEM is a new certificate for host (with its CA) and its key.
func keyPairPEM(t *testing.T, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{{127, 0, 0, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// leaf is the first certificate of a PEM chain.
func leaf(t *testing.T, certPEM []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no PEM certificate")
	}
	return b.Bytes
}

// writeCertDir puts a pair into dir as a Secret volume has it: each file
// written anew (another inode), never in place.
func writeCertDir(t *testing.T, dir string, certPEM, keyPEM []byte) {
	t.Helper()
	for name, b := range map[string][]byte{CertFile: certPEM, KeyFile: keyPEM} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// serveTLS serves on a loopback port as controller-runtime's metrics server
// does: its TLS config offers h2, then the options change it, then a
// self-signed certificate is added unless they set GetCertificate.
func serveTLS(t *testing.T, opts []func(*tls.Config), selfSigned tls.Certificate) string {
	t.Helper()
	cfg := &tls.Config{NextProtos: []string{"h2"}}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.GetCertificate == nil {
		cfg.Certificates = []tls.Certificate{selfSigned}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) }), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(tls.NewListener(l, cfg)) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// The metrics server offers HTTP/1.1 only unless HTTP/2 is asked for, and
// serves the certificate of the directory when one is given.
func TestServingTLS(t *testing.T) {
	selfCert, selfKey := keyPairPEM(t, "self-signed.example")
	selfSigned, err := tls.X509KeyPair(selfCert, selfKey)
	if err != nil {
		t.Fatal(err)
	}
	dirCert, dirKey := keyPairPEM(t, "metrics.example")
	dir := t.TempDir()
	writeCertDir(t, dir, dirCert, dirKey)
	for _, c := range []struct {
		name    string
		serving Serving
		proto   string // negotiated by a client offering h2 and http/1.1
		cert    []byte
	}{
		{"the default", Serving{}, "http/1.1", leaf(t, selfCert)},
		{"HTTP/2 asked for", Serving{EnableHTTP2: true}, "h2", leaf(t, selfCert)},
		{"a certificate directory", Serving{CertDir: dir}, "http/1.1", leaf(t, dirCert)},
		{"both", Serving{CertDir: dir, EnableHTTP2: true}, "h2", leaf(t, dirCert)},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts, err := c.serving.TLSOpts(logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			addr := serveTLS(t, opts, selfSigned)
			client := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}} //nolint:gosec // the certificate is compared below
			conn, err := tls.Dial("tcp", addr, client)
			if err != nil {
				t.Fatal(err)
			}
			state := conn.ConnectionState()
			conn.Close()
			if state.NegotiatedProtocol != c.proto {
				t.Errorf("negotiated %q, want %q", state.NegotiatedProtocol, c.proto)
			}
			if !bytes.Equal(state.PeerCertificates[0].Raw, c.cert) {
				t.Errorf("served %s, want another certificate", state.PeerCertificates[0].Subject)
			}
			// A client that would rather speak HTTP/2 speaks what was negotiated.
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: client, ForceAttemptHTTP2: true}}
			resp, err := hc.Get("https://" + addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1"}[c.proto]; string(body) != want || resp.Proto != want {
				t.Errorf("served over %s (the server saw %s), want %s", resp.Proto, body, want)
			}
		})
	}
}

// A new pair in the directory is served from the next look at it on; a
// pair that does not load leaves the previous one served.
func TestTheCertificateDirectoryIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	certA, keyA := keyPairPEM(t, "a.example")
	certB, keyB := keyPairPEM(t, "b.example")
	certC, _ := keyPairPEM(t, "c.example")
	writeCertDir(t, dir, certA, keyA)
	now := time.Unix(1_800_000_000, 0)
	opts, err := Serving{CertDir: dir}.tlsOpts(logr.Discard(), func() time.Time { return now }, reloadEvery)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{}
	for _, o := range opts {
		o(cfg)
	}
	expect := func(step string, certPEM []byte) {
		t.Helper()
		cert, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !bytes.Equal(cert.Certificate[0], leaf(t, certPEM)) {
			got, _ := x509.ParseCertificate(cert.Certificate[0])
			t.Fatalf("%s: served %s, want the other", step, got.Subject)
		}
	}
	expect("at start", certA)
	writeCertDir(t, dir, certB, keyB)
	now = now.Add(reloadEvery / 2)
	expect("before the next look", certA)
	now = now.Add(reloadEvery / 2)
	expect("at the next look", certB)
	writeCertDir(t, dir, certC, keyB) // a certificate without its key
	now = now.Add(reloadEvery)
	expect("a pair that does not match", certB)
	if err := os.Remove(filepath.Join(dir, KeyFile)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(reloadEvery)
	expect("a missing key", certB)
}

// A directory without a usable pair stops the start: the operator does not
// serve another certificate than the one it was given.
func TestAnUnusableCertificateDirectoryIsAnError(t *testing.T) {
	cert, key := keyPairPEM(t, "metrics.example")
	_, otherKey := keyPairPEM(t, "other.example")
	for _, c := range []struct {
		name  string
		files map[string][]byte
	}{
		{"empty", nil},
		{"no key", map[string][]byte{CertFile: cert}},
		{"no certificate", map[string][]byte{KeyFile: key}},
		{"another certificate's key", map[string][]byte{CertFile: cert, KeyFile: otherKey}},
		{"not PEM", map[string][]byte{CertFile: []byte("cert"), KeyFile: []byte("key")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := (Serving{CertDir: dir}).TLSOpts(logr.Discard()); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestServingFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want Serving
	}{
		{nil, Serving{}},
		{[]string{"--metrics-enable-http2"}, Serving{EnableHTTP2: true}},
		{[]string{"--metrics-cert-dir", "/certs"}, Serving{CertDir: "/certs"}},
	} {
		var s Serving
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		s.BindFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if s != c.want {
			t.Errorf("%v: %+v, want %+v", c.args, s, c.want)
		}
	}
}
