package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

// FuzzMerge checks the invariants of Merge on arbitrary input. Its seeds run
// in every `go test`.
func FuzzMerge(f *testing.F) {
	fx := getFixtures(f)
	noEnd := strings.Join(strings.SplitAfter(fx.caB.pem, "\n")[:3], "")
	for _, seed := range []struct {
		data     string
		bin, der []byte
		strict   bool
	}{
		{fx.caA.pem + fx.caB.pem, nil, nil, true},
		{fx.caA.pem + fx.caA.pem, []byte(fx.caA.pem), fx.caA.der, true},
		{crlf("# Subject: A\n" + fx.caA.pem + "text\n" + fx.caC.pem), nil, fx.caB.der, true},
		{fx.caA.pem + fx.keyPEMs["PRIVATE KEY"], []byte(fx.keyPEMs["EC PRIVATE KEY"]), nil, false},
		{fx.keyPEMs["RSA PRIVATE KEY"], nil, nil, true},
		{noEnd + fx.caC.pem, nil, nil, false},
		{pemOf("CERTIFICATE", fx.caA.der[:40]), nil, []byte("junk"), false},
		{"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n", nil, nil, true},
		{"", []byte(" \n\t"), nil, false},
		{"not PEM", nil, nil, true},
		{fx.expired.pem, []byte(fx.notYet.pem), fx.leaf.der, true},
	} {
		f.Add(seed.data, seed.bin, seed.der, seed.strict)
	}

	f.Fuzz(func(t *testing.T, data string, bin, der []byte, strict bool) {
		sources := []Source{
			{Name: "fuzz", Strict: strict, Data: map[string]string{"a": data}, BinaryData: map[string][]byte{"b": bin}},
			{Name: "public roots", DER: [][]byte{der}},
		}
		got, err := Merge(sources, Options{Now: testNow})
		if err != nil {
			var se *SourceError
			var tl *TooLargeError
			switch {
			case errors.As(err, &tl):
			case errors.As(err, &se):
				if !strict {
					t.Fatalf("lenient sources only, yet a SourceError: %v", err)
				}
			default:
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if got != nil {
				t.Fatal("bundle returned with an error")
			}
			return
		}
		checkBundle(t, got)

		// Merging the output again gives the same bytes, whether it comes
		// as data or as binaryData.
		for _, src := range []Source{
			{Name: "again", Strict: got.Certificates > 0, Data: map[string]string{"ca.crt": string(got.PEM)}},
			{Name: "again", Strict: got.Certificates > 0, BinaryData: map[string][]byte{"ca.crt": got.PEM}},
		} {
			again, err := Merge([]Source{src}, Options{Now: testNow})
			if err != nil {
				t.Fatalf("merging the output again: %v", err)
			}
			if !bytes.Equal(got.PEM, again.PEM) {
				t.Fatalf("not idempotent:\n%s\n---\n%s", got.PEM, again.PEM)
			}
		}
	})
}

// checkBundle asserts that b.PEM holds exactly b.Certificates certificates,
// all CERTIFICATE blocks, sorted by hash without duplicates, nothing else.
func checkBundle(t *testing.T, b *Bundle) {
	t.Helper()
	rest := b.PEM
	var prev []byte
	n := 0
	for len(rest) > 0 {
		block, r := pem.Decode(rest)
		if block == nil {
			t.Fatalf("output has trailing non-PEM data: %q", rest)
		}
		if !bytes.HasPrefix(rest, []byte("-----BEGIN CERTIFICATE-----\n")) {
			t.Fatalf("output has text before block %d", n+1)
		}
		rest = r
		n++
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			t.Fatalf("block %d: type %q, headers %v", n, block.Type, block.Headers)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("block %d does not parse: %v", n, err)
		}
		h := sha256.Sum256(block.Bytes)
		if prev != nil && bytes.Compare(prev, h[:]) >= 0 {
			t.Fatalf("block %d is not after block %d in hash order (or is a duplicate)", n, n-1)
		}
		prev = h[:]
	}
	if n != b.Certificates {
		t.Fatalf("PEM has %d blocks, Certificates is %d", n, b.Certificates)
	}
}
