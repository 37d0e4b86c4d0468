package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// DefaultMaxBytes is the default limit on the merged PEM: the 1 MiB limit of
// a ConfigMap minus 1 KiB of room for its metadata.
const DefaultMaxBytes = 1<<20 - 1<<10

// Source is one input of Merge.
type Source struct {
	// Name names the source in errors and warnings, for example
	// "ConfigMap team-a/my-cas" or "public roots".
	Name string
	// Strict is true for sources the user named explicitly: any problem is
	// a *SourceError. For auto-detected sources (false), bad blocks,
	// non-certificate blocks, values without PEM and missing keys are
	// skipped with a Warning.
	Strict bool
	// Data holds PEM text by key.
	Data map[string]string
	// BinaryData holds PEM bytes by key; it is read exactly like Data. A key
	// present in both is read as the Data value, a newline, then the
	// BinaryData value.
	BinaryData map[string][]byte
	// Keys are the keys to read, in this order. Nil means every key of Data
	// and BinaryData, sorted; an empty non-nil slice reads no key.
	Keys []string
	// DER holds certificates already in DER form, such as the public roots.
	// They are read after the keys and merged like them; in messages they
	// have an empty Key and Block is their 1-based index.
	DER [][]byte
}

// Options tunes Merge.
type Options struct {
	// MaxBytes limits the size of the merged PEM: 0 means DefaultMaxBytes,
	// a negative value means no limit.
	MaxBytes int
	// Now is the time expiry warnings are computed against; the zero value
	// means time.Now().
	Now time.Time
}

// Bundle is the result of Merge.
type Bundle struct {
	// PEM is the merged bundle: CERTIFICATE blocks sorted by the SHA-256 of
	// their DER, 64-character lines, each block ending in "\n", nothing
	// between blocks. It is empty (not nil) when there is no certificate.
	PEM []byte
	// Certificates is the number of blocks in PEM.
	Certificates int
	// Warnings are in input order: sources in the order given, then keys in
	// reading order, then blocks. A certificate found more than once gets
	// its expiry warning only at its first occurrence.
	Warnings []Warning
}

// Merge merges the certificates of sources into one bundle.
//
// It returns a *SourceError for the first problem in a strict source and a
// *TooLargeError when the result is over the size limit; in both cases the
// bundle is nil. No certificate at all is not an error: the bundle is then
// empty.
func Merge(sources []Source, opts Options) (*Bundle, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	m := &merger{now: now, certs: map[[sha256.Size]byte][]byte{}}
	for i := range sources {
		if err := m.readSource(&sources[i]); err != nil {
			return nil, err
		}
	}

	out := m.encode()
	limit := opts.MaxBytes
	if limit == 0 {
		limit = DefaultMaxBytes
	}
	if limit > 0 && len(out) > limit {
		return nil, &TooLargeError{Bytes: len(out), Limit: limit}
	}
	return &Bundle{
		PEM:          out,
		Certificates: len(m.certs),
		Warnings:     m.warnings,
	}, nil
}

// merger holds the state of one Merge.
type merger struct {
	now      time.Time
	certs    map[[sha256.Size]byte][]byte
	warnings []Warning
}

// problem reports msg as an error for a strict source and as a warning
// (returning nil) for a lenient one.
func (m *merger) problem(src *Source, key string, block int, msg string) error {
	if src.Strict {
		return &SourceError{Source: src.Name, Key: key, Block: block, Message: msg}
	}
	m.warn(src, key, block, msg+"; skipped")
	return nil
}

func (m *merger) warn(src *Source, key string, block int, msg string) {
	m.warnings = append(m.warnings, Warning{Source: src.Name, Key: key, Block: block, Message: msg})
}

func (m *merger) readSource(src *Source) error {
	keys := src.Keys
	if keys == nil {
		keys = sourceKeys(src)
		if len(keys) == 0 && len(src.DER) == 0 && src.Strict {
			return &SourceError{Source: src.Name, Message: "no certificate found: the source has no keys"}
		}
	}
	for _, key := range keys {
		value, found := lookup(src, key)
		if !found {
			if err := m.problem(src, key, 0, missingKeyMessage(src)); err != nil {
				return err
			}
			continue
		}
		if err := m.readValue(src, key, value); err != nil {
			return err
		}
	}
	for i, der := range src.DER {
		if err := m.addDER(src, "", i+1, der); err != nil {
			return err
		}
	}
	return nil
}

// readValue reads the PEM blocks of one key.
func (m *merger) readValue(src *Source, key string, value []byte) error {
	if len(bytes.TrimSpace(value)) == 0 {
		if src.Strict {
			return &SourceError{Source: src.Name, Key: key, Message: "the key is empty: it holds no certificate"}
		}
		return nil
	}
	if line := indentedBegin(value); line > 0 {
		// encoding/pem only sees BEGIN lines at the start of a line: an
		// indented one (a YAML block scalar indented twice) would silently
		// drop its certificate.
		if err := m.problem(src, key, 0, fmt.Sprintf("line %d: a -----BEGIN line is indented; PEM needs it at the start of a line (remove the leading spaces)", line)); err != nil {
			return err
		}
	}
	blocks := splitPEM(value)
	if len(blocks) == 0 {
		return m.problem(src, key, 0, "no PEM certificate found (no -----BEGIN CERTIFICATE----- line)")
	}
	for _, b := range blocks {
		var err error
		switch {
		case !b.ok:
			err = m.problem(src, key, b.index, fmt.Sprintf(
				"malformed PEM block of type %s (missing or wrong END line, or bad base64); it was not copied",
				quoteType(b.typ)))
		case b.typ != certificateType:
			err = m.problem(src, key, b.index, fmt.Sprintf(
				"PEM block of type %s is not a certificate; it was not copied", quoteType(b.typ)))
		default:
			err = m.addDER(src, key, b.index, b.der)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addDER parses one certificate and adds it unless already present.
func (m *merger) addDER(src *Source, key string, block int, der []byte) error {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return m.problem(src, key, block, "not a certificate: "+err.Error())
	}
	sum := sha256.Sum256(der)
	if _, dup := m.certs[sum]; dup {
		return nil
	}
	m.certs[sum] = der
	switch {
	case m.now.After(cert.NotAfter):
		m.warn(src, key, block, fmt.Sprintf("certificate %s expired at %s; kept in the bundle",
			subjectName(cert), cert.NotAfter.UTC().Format(time.RFC3339)))
	case m.now.Before(cert.NotBefore):
		m.warn(src, key, block, fmt.Sprintf("certificate %s is not valid before %s (expires at %s); kept in the bundle",
			subjectName(cert), cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)))
	}
	return nil
}

// encode writes the certificates sorted by hash.
func (m *merger) encode() []byte {
	out := []byte{}
	for _, sum := range slices.SortedFunc(maps.Keys(m.certs), func(a, b [sha256.Size]byte) int {
		return bytes.Compare(a[:], b[:])
	}) {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: certificateType, Bytes: m.certs[sum]})...)
	}
	return out
}

// subjectName names a certificate by its subject CN, quoted, or by its whole
// subject when it has no CN.
func subjectName(cert *x509.Certificate) string {
	if cn := cert.Subject.CommonName; cn != "" {
		return fmt.Sprintf("CN=%q", cn)
	}
	if s := cert.Subject.String(); s != "" {
		return fmt.Sprintf("%q", s)
	}
	return "(no subject)"
}

// sourceKeys returns every key of Data and BinaryData, sorted, once each.
func sourceKeys(src *Source) []string {
	keys := slices.Collect(maps.Keys(src.Data))
	for k := range src.BinaryData {
		if _, dup := src.Data[k]; !dup {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// lookup returns the value of key in Data and BinaryData.
func lookup(src *Source, key string) ([]byte, bool) {
	d, inData := src.Data[key]
	b, inBinary := src.BinaryData[key]
	switch {
	case inData && inBinary:
		return slices.Concat([]byte(d), []byte("\n"), b), true
	case inData:
		return []byte(d), true
	case inBinary:
		return b, true
	}
	return nil, false
}

// maxListedKeys bounds the keys listed in a "key not found" message.
const maxListedKeys = 20

func missingKeyMessage(src *Source) string {
	keys := sourceKeys(src)
	if len(keys) == 0 {
		return "key not found; the source has no keys"
	}
	more := ""
	if len(keys) > maxListedKeys {
		more = fmt.Sprintf(" and %d more", len(keys)-maxListedKeys)
		keys = keys[:maxListedKeys]
	}
	return "key not found; the source has keys: " + strings.Join(keys, ", ") + more
}
