package metricsauth

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// The files of CertDir: those of a kubernetes.io/tls Secret, of the Secret a
// cert-manager Certificate writes, and of OpenShift's service serving
// certificate, so that any of them can be mounted as it is.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// reloadEvery is how often the mounted files are looked at for a new
// certificate (as controller-runtime's certwatcher polls): a rotated Secret
// reaches the volume within a minute or so, and this adds at most as much.
const reloadEvery = 10 * time.Second

// Serving is how the metrics endpoint speaks TLS. Its zero value is the
// default: HTTP/1.1 only, and the certificate the metrics server makes up.
type Serving struct {
	// EnableHTTP2 offers HTTP/2 too. Off by default, as kubebuilder
	// scaffolds: HTTP/2 is negotiated in the TLS handshake, before any
	// token is looked at, so its stream handling (rapid reset,
	// CVE-2023-44487 and CVE-2023-39325) is open to anyone who reaches the
	// port, and a scraper gains nothing from it.
	EnableHTTP2 bool
	// CertDir holds the serving certificate (CertFile, with its chain) and
	// its key (KeyFile); they are read again when they change. Empty: the
	// metrics server generates a self-signed certificate at start, which a
	// scraper can only accept unverified.
	CertDir string
}

// BindFlags adds --metrics-enable-http2 and --metrics-cert-dir to fs.
func (s *Serving) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&s.EnableHTTP2, "metrics-enable-http2", false, "offer HTTP/2 on the metrics endpoint (off: HTTP/2 is negotiated before a client is authenticated)")
	fs.StringVar(&s.CertDir, "metrics-cert-dir", "", "directory with the metrics endpoint's certificate ("+CertFile+", "+KeyFile+"), read again when they change; empty: a self-signed certificate generated at start")
}

// TLSOpts change the metrics server's TLS config (controller-runtime's
// metricsserver.Options.TLSOpts, applied after its own defaults: they
// replace its NextProtos, and with a CertDir its certificate, since a
// GetCertificate keeps it from generating one). An error says the
// certificate in CertDir cannot be used: the operator should not start
// serving a certificate other than the one it was given.
func (s Serving) TLSOpts(log logr.Logger) ([]func(*tls.Config), error) {
	return s.tlsOpts(log, time.Now, reloadEvery)
}

func (s Serving) tlsOpts(log logr.Logger, now func() time.Time, every time.Duration) ([]func(*tls.Config), error) {
	var opts []func(*tls.Config)
	if !s.EnableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	if s.CertDir != "" {
		kp := &keyPair{
			certPath: filepath.Join(s.CertDir, CertFile),
			keyPath:  filepath.Join(s.CertDir, KeyFile),
			log:      log.WithValues("dir", s.CertDir),
			now:      now,
			every:    every,
		}
		if err := kp.load(); err != nil {
			return nil, fmt.Errorf("metrics certificate: %w", err)
		}
		kp.checked = now()
		opts = append(opts, func(c *tls.Config) { c.GetCertificate = kp.get })
	}
	return opts, nil
}

// keyPair is a certificate read from files, and read again when they are
// replaced. A Secret volume replaces them together (the kubelet swaps a
// symbolic link to a new directory), so both are looked at; a pair that
// does not load (a half-copied one) leaves the previous certificate served,
// and is tried again at the next look.
type keyPair struct {
	certPath, keyPath string
	log               logr.Logger
	now               func() time.Time
	every             time.Duration

	mu                sync.Mutex
	cert              *tls.Certificate
	certInfo, keyInfo os.FileInfo
	checked           time.Time
}

// get is a tls.Config's GetCertificate.
func (kp *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if now := kp.now(); now.Sub(kp.checked) >= kp.every {
		kp.checked = now
		if kp.changed() {
			if err := kp.load(); err != nil {
				kp.log.Error(err, "Keeping the previous metrics certificate")
			} else {
				kp.log.Info("Metrics certificate reloaded")
			}
		}
	}
	return kp.cert, nil
}

// changed says whether either file is another file, or written since it
// was read.
func (kp *keyPair) changed() bool {
	certInfo, err1 := os.Stat(kp.certPath)
	keyInfo, err2 := os.Stat(kp.keyPath)
	if err1 != nil || err2 != nil {
		return true // load says what is wrong
	}
	same := func(a, b os.FileInfo) bool {
		return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
	}
	return !same(certInfo, kp.certInfo) || !same(keyInfo, kp.keyInfo)
}

// load reads the pair. The files are looked at before they are read: one
// replaced in between differs from what was recorded, and is read again.
func (kp *keyPair) load() error {
	certInfo, err := os.Stat(kp.certPath)
	if err != nil {
		return err
	}
	keyInfo, err := os.Stat(kp.keyPath)
	if err != nil {
		return err
	}
	certPEM, err := os.ReadFile(kp.certPath)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(kp.keyPath)
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("%s and %s: %w", kp.certPath, kp.keyPath, err)
	}
	kp.cert, kp.certInfo, kp.keyInfo = &cert, certInfo, keyInfo
	return nil
}
