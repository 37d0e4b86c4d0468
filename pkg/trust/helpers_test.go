package trust

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testNow is the Options.Now of most tests.
var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testCert is a certificate generated for the tests.
type testCert struct {
	cn  string
	der []byte
	pem string
	sum [sha256.Size]byte
}

// certSpec describes a certificate to generate.
type certSpec struct {
	cn        string
	serial    int64
	notBefore time.Time
	notAfter  time.Time
	leaf      bool     // not a CA
	dnsNames  []string // to make big certificates
}

// fixtures are the certificates and keys shared by the tests, generated once
// per test binary; nothing is checked in.
type fixtures struct {
	caA, caB, caC   testCert
	expired, notYet testCert
	leaf            testCert
	// keyPEMs are non-certificate blocks by type; keyB64 is the base64 of
	// their content, which must never leak.
	keyPEMs map[string]string
	keyB64  map[string]string
}

var (
	fixOnce sync.Once
	fix     *fixtures
	fixErr  error
)

func getFixtures(t testing.TB) *fixtures {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = newFixtures() })
	if fixErr != nil {
		t.Fatalf("generating fixtures: %v", fixErr)
	}
	return fix
}

func newFixtures() (*fixtures, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	valid := func(cn string, serial int64) certSpec {
		return certSpec{cn: cn, serial: serial, notBefore: date(2025), notAfter: date(2035)}
	}
	f := &fixtures{}
	for _, c := range []struct {
		dst  *testCert
		spec certSpec
	}{
		{&f.caA, valid("Test CA A", 1)},
		{&f.caB, valid("Test CA B", 2)},
		{&f.caC, valid("Test CA C", 3)},
		{&f.expired, certSpec{cn: "Expired CA", serial: 4, notBefore: date(2019), notAfter: date(2021)}},
		{&f.notYet, certSpec{cn: "Future CA", serial: 5, notBefore: date(2027), notAfter: date(2037)}},
		{&f.leaf, certSpec{cn: "server.example.com", serial: 6, notBefore: date(2025), notAfter: date(2035), leaf: true}},
	} {
		if *c.dst, err = makeCert(key, c.spec); err != nil {
			return nil, err
		}
	}

	// The secrets use their own key, as a user's private key would.
	if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	ec, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader,
		&x509.CertificateRequest{Subject: pkix.Name{CommonName: "csr"}}, key)
	if err != nil {
		return nil, err
	}
	// Not a real RSA key (generating one is slow): the block type is what
	// matters, and its content must not leak either.
	rsaLike := slices.Concat([]byte("not really rsa"), pkcs8)
	f.keyPEMs, f.keyB64 = map[string]string{}, map[string]string{}
	for typ, der := range map[string][]byte{
		"PRIVATE KEY":         pkcs8,
		"EC PRIVATE KEY":      ec,
		"RSA PRIVATE KEY":     rsaLike,
		"CERTIFICATE REQUEST": csr,
	} {
		f.keyPEMs[typ] = string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
		f.keyB64[typ] = base64.StdEncoding.EncodeToString(der)
	}
	return f, nil
}

func date(year int) time.Time { return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC) }

// makeCert creates a self-signed certificate.
func makeCert(key *ecdsa.PrivateKey, s certSpec) (testCert, error) {
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(s.serial),
		Subject:               pkix.Name{CommonName: s.cn, Organization: []string{"trust tests"}},
		NotBefore:             s.notBefore,
		NotAfter:              s.notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  !s.leaf,
		DNSNames:              s.dnsNames,
	}
	if s.leaf {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return testCert{}, fmt.Errorf("creating %q: %w", s.cn, err)
	}
	return testCert{
		cn:  s.cn,
		der: der,
		pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		sum: sha256.Sum256(der),
	}, nil
}

// bigCerts makes n distinct certificates of roughly size bytes of PEM each.
func bigCerts(t testing.TB, n, size int) []testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A DNS name of 60 characters costs about 62 DER bytes, 83 PEM bytes.
	names := make([]string, size/83)
	for i := range names {
		names[i] = fmt.Sprintf("%055d.test", i)
	}
	certs := make([]testCert, n)
	for i := range certs {
		s := certSpec{cn: fmt.Sprintf("big %d", i), serial: int64(100 + i), notBefore: date(2025), notAfter: date(2035), dnsNames: names}
		if certs[i], err = makeCert(key, s); err != nil {
			t.Fatal(err)
		}
	}
	return certs
}

// wantPEM is the expected bundle for certs: deduplicated, sorted by hash.
// It is built by hand, not with the code under test.
func wantPEM(certs ...testCert) string {
	byHash := map[string]testCert{}
	for _, c := range certs {
		byHash[fmt.Sprintf("%x", c.sum)] = c
	}
	var sb strings.Builder
	for _, h := range slices.Sorted(maps.Keys(byHash)) {
		sb.WriteString(byHash[h].pem)
	}
	return sb.String()
}

// crlf converts line endings to CRLF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// pemOf wraps bytes in a PEM block of typ.
func pemOf(typ string, b []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}))
}

// fragments returns overlapping 16-character pieces of s, to check that no
// part of a secret leaks.
func fragments(s string) []string {
	var out []string
	for i := 0; i+16 <= len(s); i += 8 {
		out = append(out, s[i:i+16])
	}
	return out
}
