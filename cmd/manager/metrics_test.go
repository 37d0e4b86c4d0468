package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"flag"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certutil "k8s.io/client-go/util/cert"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/metricsauth"
)

// metricsauth.Serving's TLS options do in controller-runtime's metrics
// server what they say: its own default offers HTTP/2 before anyone is
// authenticated and generates a certificate; with them HTTP/2 is off
// unless asked for, and a certificate directory's pair is served instead.
func TestMetricsServerTLS(t *testing.T) {
	logf.SetLogger(logr.Discard())
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("metrics.example", []net.IP{{127, 0, 0, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	dir := t.TempDir()
	for name, b := range map[string][]byte{metricsauth.CertFile: certPEM, metricsauth.KeyFile: keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		args    []string // of `manager run`; nil: no options, controller-runtime's defaults
		proto   string
		dirCert bool
	}{
		{"controller-runtime's defaults", nil, "h2", false},
		{"the operator's defaults", []string{}, "http/1.1", false},
		{"HTTP/2 asked for", []string{"--metrics-enable-http2"}, "h2", false},
		{"a certificate directory", []string{"--metrics-cert-dir", dir}, "http/1.1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Where controller-runtime looks for a pair without options:
			// empty, so that it generates one.
			opts := metricsserver.Options{BindAddress: "127.0.0.1:0", SecureServing: true, CertDir: t.TempDir()}
			if c.args != nil {
				var serving metricsauth.Serving
				fs := flag.NewFlagSet("run", flag.ContinueOnError)
				serving.BindFlags(fs)
				if err := fs.Parse(c.args); err != nil {
					t.Fatal(err)
				}
				if opts.TLSOpts, err = serving.TLSOpts(logr.Discard()); err != nil {
					t.Fatal(err)
				}
			}
			srv, err := metricsserver.NewServer(opts, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-done }) //nolint:errcheck // stopped by the test: how it ended says nothing
			bound := srv.(interface{ GetBindAddr() string })
			deadline := time.Now().Add(10 * time.Second)
			for bound.GetBindAddr() == "" && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			conn, err := tls.Dial("tcp", bound.GetBindAddr(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec // the certificate is compared below
			if err != nil {
				t.Fatal(err)
			}
			state := conn.ConnectionState()
			conn.Close()
			if state.NegotiatedProtocol != c.proto {
				t.Errorf("negotiated %q, want %q", state.NegotiatedProtocol, c.proto)
			}
			if got := bytes.Equal(state.PeerCertificates[0].Raw, block.Bytes); got != c.dirCert {
				t.Errorf("served %s (the directory's: %v), want the directory's: %v", state.PeerCertificates[0].Subject, got, c.dirCert)
			}
		})
	}
}
