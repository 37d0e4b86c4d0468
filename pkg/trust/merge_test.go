package trust

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergeCase is one case of TestMerge.
type mergeCase struct {
	name    string
	sources []Source
	want    []testCert // expected certificates (duplicates allowed)
	// wantWarnings are compared on Source, Key and Block; Message is a
	// substring of the real message.
	wantWarnings []Warning
	// wantErr, when set, is compared the same way and no bundle is expected.
	wantErr *SourceError
	// secrets must not appear in the warnings or the error (the PEM is
	// compared exactly, which already excludes them).
	secrets []string
}

func strictCM(name string, data map[string]string) Source {
	return Source{Name: "ConfigMap " + name, Strict: true, Data: data}
}

func lenientCM(name string, data map[string]string) Source {
	return Source{Name: "ConfigMap " + name, Data: data}
}

func mergeCases(t *testing.T) []mergeCase {
	f := getFixtures(t)
	a, b, c := f.caA, f.caB, f.caC
	// truncatedPEM has a BEGIN line and two lines of base64, no END line.
	truncatedPEM := strings.Join(strings.SplitAfter(b.pem, "\n")[:3], "")
	badBase64 := "-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n"
	halfDER := pemOf("CERTIFICATE", a.der[:len(a.der)/2])
	garbageDER := pemOf("CERTIFICATE", []byte("garbage, not DER"))

	cases := []mergeCase{
		{
			name:    "one certificate",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": a.pem})},
			want:    []testCert{a},
		},
		{
			name:    "several certificates in one key are sorted by hash",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": b.pem + c.pem + a.pem})},
			want:    []testCert{a, b, c},
		},
		{
			name:    "duplicate within a key appears once",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": a.pem + b.pem + a.pem})},
			want:    []testCert{a, b},
		},
		{
			name: "duplicate across sources and keys appears once",
			sources: []Source{
				strictCM("team-a/cas", map[string]string{"ca.crt": a.pem, "other.crt": a.pem + c.pem}),
				lenientCM("kube-system/kube-root-ca.crt", map[string]string{"ca.crt": b.pem + a.pem}),
			},
			want: []testCert{a, b, c},
		},
		{
			name: "text between and around blocks is dropped",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": "# Subject: CN=Test CA A\n# Label: \"A\"\n" +
				a.pem + "\nsome free text\n# Subject: CN=Test CA B\n" + b.pem + "trailing text without newline"})},
			want: []testCert{a, b},
		},
		{
			name:    "CRLF line endings",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": crlf("# Subject: A\n" + a.pem + "\n# Subject: B\n" + b.pem)})},
			want:    []testCert{a, b},
		},
		{
			name:    "binaryData is read like data",
			sources: []Source{{Name: "ConfigMap team-a/bin", Strict: true, BinaryData: map[string][]byte{"ca.crt": []byte(crlf(a.pem))}}},
			want:    []testCert{a},
		},
		{
			name: "nil Keys reads every key of data and binaryData",
			sources: []Source{{Name: "ConfigMap team-a/mixed", Strict: true,
				Data: map[string]string{"a.crt": a.pem}, BinaryData: map[string][]byte{"b.crt": []byte(b.pem)}}},
			want: []testCert{a, b},
		},
		{
			name: "a key in both data and binaryData is read from both",
			sources: []Source{{Name: "ConfigMap team-a/both", Strict: true,
				Data: map[string]string{"ca.crt": a.pem}, BinaryData: map[string][]byte{"ca.crt": []byte(b.pem)}}},
			want: []testCert{a, b},
		},
		{
			name: "Keys reads only the keys named",
			sources: []Source{{Name: "ConfigMap team-a/cas", Strict: true, Keys: []string{"b.crt"},
				Data: map[string]string{"a.crt": "not PEM at all", "b.crt": b.pem, "c.crt": c.pem}}},
			want: []testCert{b},
		},
		{
			name: "Keys order is the order of warnings",
			sources: []Source{{Name: "auto", Keys: []string{"z", "a"},
				Data: map[string]string{"a": "junk a", "z": "junk z"}}},
			wantWarnings: []Warning{
				{Source: "auto", Key: "z", Message: "no PEM certificate found"},
				{Source: "auto", Key: "a", Message: "no PEM certificate found"},
			},
		},
		{
			name: "an empty non-nil Keys reads nothing",
			sources: []Source{{Name: "ConfigMap team-a/cas", Strict: true, Keys: []string{},
				Data: map[string]string{"a.crt": "not PEM"}}},
		},
		{
			name:    "non-PEM text, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": "hello, I am not a certificate"})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Message: "no PEM certificate found"},
		},
		{
			name:         "non-PEM text, lenient",
			sources:      []Source{lenientCM("auto/cas", map[string]string{"a.crt": a.pem, "junk": "hello\nworld\n"})},
			want:         []testCert{a},
			wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "junk", Message: "no PEM certificate found (no -----BEGIN CERTIFICATE----- line); skipped"}},
		},
		{
			name:    "truncated certificate DER, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": b.pem + halfDER})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 2, Message: "not a certificate: x509: "},
		},
		{
			name:         "truncated certificate DER, lenient",
			sources:      []Source{lenientCM("auto/cas", map[string]string{"ca.crt": b.pem + halfDER})},
			want:         []testCert{b},
			wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 2, Message: "not a certificate: x509: "}},
		},
		{
			name:         "garbage DER in a CERTIFICATE block, lenient",
			sources:      []Source{lenientCM("auto/cas", map[string]string{"ca.crt": garbageDER + c.pem})},
			want:         []testCert{c},
			wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 1, Message: "not a certificate: x509: "}},
		},
		{
			name:    "block without END line, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": a.pem + truncatedPEM})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 2, Message: `malformed PEM block of type "CERTIFICATE"`},
		},
		{
			name:         "block without END line does not hide the next block, lenient",
			sources:      []Source{lenientCM("auto/cas", map[string]string{"ca.crt": truncatedPEM + c.pem})},
			want:         []testCert{c},
			wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 1, Message: `malformed PEM block of type "CERTIFICATE"`}},
		},
		{
			name:    "bad base64, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": badBase64 + a.pem})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 1, Message: "malformed PEM block"},
		},
		{
			name:         "bad base64, lenient",
			sources:      []Source{lenientCM("auto/cas", map[string]string{"ca.crt": a.pem + badBase64 + b.pem})},
			want:         []testCert{a, b},
			wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 2, Message: "malformed PEM block"}},
		},
		{
			name:         "expired certificate is kept with a warning",
			sources:      []Source{strictCM("team-a/cas", map[string]string{"ca.crt": a.pem + f.expired.pem})},
			want:         []testCert{a, f.expired},
			wantWarnings: []Warning{{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 2, Message: `certificate CN="Expired CA" expired at 2021-01-01T00:00:00Z; kept`}},
		},
		{
			name:         "not yet valid certificate is kept with a warning",
			sources:      []Source{strictCM("team-a/cas", map[string]string{"ca.crt": f.notYet.pem})},
			want:         []testCert{f.notYet},
			wantWarnings: []Warning{{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 1, Message: `certificate CN="Future CA" is not valid before 2027-01-01T00:00:00Z (expires at 2037-01-01T00:00:00Z)`}},
		},
		{
			name: "expired certificate in two sources warns once, at the first",
			sources: []Source{
				lenientCM("auto/first", map[string]string{"x": f.expired.pem}),
				strictCM("team-a/second", map[string]string{"y": f.expired.pem}),
			},
			want:         []testCert{f.expired},
			wantWarnings: []Warning{{Source: "ConfigMap auto/first", Key: "x", Block: 1, Message: "expired"}},
		},
		{
			name:    "leaf certificate is kept without a warning",
			sources: []Source{strictCM("team-a/pins", map[string]string{"server.crt": f.leaf.pem})},
			want:    []testCert{f.leaf},
		},
		{
			name:    "empty key, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"a.crt": a.pem, "ca.crt": ""})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Message: "the key is empty"},
		},
		{
			name:    "whitespace-only key, strict",
			sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": " \r\n\t\n  "})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Message: "the key is empty: it holds no certificate"},
		},
		{
			name:    "whitespace-only binaryData key, strict",
			sources: []Source{{Name: "ConfigMap team-a/bin", Strict: true, BinaryData: map[string][]byte{"ca.crt": []byte("\n\n")}}},
			wantErr: &SourceError{Source: "ConfigMap team-a/bin", Key: "ca.crt", Message: "the key is empty"},
		},
		{
			name: "empty and whitespace-only keys, lenient: no warning",
			sources: []Source{{Name: "auto", Data: map[string]string{"a.crt": a.pem, "empty": "", "blank": " \r\n\t "},
				BinaryData: map[string][]byte{"bin": nil}}},
			want: []testCert{a},
		},
		{
			name: "missing key, strict",
			sources: []Source{{Name: "ConfigMap team-a/cas", Strict: true, Keys: []string{"a", "ca.crt"},
				Data: map[string]string{"a": a.pem}, BinaryData: map[string][]byte{"b": []byte(b.pem)}}},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Message: "key not found; the source has keys: a, b"},
		},
		{
			name:    "missing key in an empty source, strict",
			sources: []Source{{Name: "ConfigMap team-a/cas", Strict: true, Keys: []string{"ca.crt"}}},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Message: "key not found; the source has no keys"},
		},
		{
			name: "missing key, lenient",
			sources: []Source{{Name: "auto", Keys: []string{"ca.crt", "a"},
				Data: map[string]string{"a": a.pem}}},
			want:         []testCert{a},
			wantWarnings: []Warning{{Source: "auto", Key: "ca.crt", Message: "key not found; the source has keys: a; skipped"}},
		},
		{
			name:    "strict source without any key",
			sources: []Source{{Name: "ConfigMap team-a/empty", Strict: true}},
			wantErr: &SourceError{Source: "ConfigMap team-a/empty", Message: "no certificate found: the source has no keys"},
		},
		{
			name:    "lenient source without any key",
			sources: []Source{{Name: "auto"}},
		},
		{
			name: "no sources",
		},
		{
			name: "DER input is merged and deduplicated with PEM",
			sources: []Source{
				{Name: "public roots", DER: [][]byte{b.der, a.der}},
				strictCM("team-a/cas", map[string]string{"ca.crt": a.pem + c.pem}),
			},
			want: []testCert{a, b, c},
		},
		{
			name:         "bad DER entry, lenient",
			sources:      []Source{{Name: "public roots", DER: [][]byte{a.der, []byte("junk"), nil}}},
			want:         []testCert{a},
			wantWarnings: []Warning{{Source: "public roots", Block: 2, Message: "not a certificate"}, {Source: "public roots", Block: 3, Message: "not a certificate"}},
		},
		{
			name:    "bad DER entry, strict",
			sources: []Source{{Name: "extra roots", Strict: true, DER: [][]byte{a.der, b.der[:10]}}},
			wantErr: &SourceError{Source: "extra roots", Block: 2, Message: "not a certificate: x509: "},
		},
		{
			name:    "the first problem of a strict source is returned",
			sources: []Source{strictCM("team-a/cas", map[string]string{"a": a.pem, "b": "junk b", "c": "junk c"})},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "b", Message: "no PEM certificate found"},
		},
		{
			name: "a strict error after lenient warnings returns no bundle",
			sources: []Source{
				lenientCM("auto/cas", map[string]string{"x": "junk"}),
				strictCM("team-a/cas", map[string]string{"ca.crt": garbageDER}),
			},
			wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 1, Message: "not a certificate"},
		},
	}

	// Non-certificate blocks, in both modes: never copied, never leaked.
	for _, typ := range []string{"PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY", "CERTIFICATE REQUEST"} {
		key, secret := f.keyPEMs[typ], f.keyB64[typ]
		// A malformed key block: no END line.
		cut := strings.Join(strings.SplitAfter(key, "\n")[:3], "")
		quoted := `"` + typ + `"`
		cases = append(cases,
			mergeCase{
				name:    typ + " block, strict",
				sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": a.pem + key + b.pem})},
				wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 2,
					Message: "PEM block of type " + quoted + " is not a certificate; it was not copied"},
				secrets: []string{secret},
			},
			mergeCase{
				name:    typ + " block, lenient",
				sources: []Source{lenientCM("auto/cas", map[string]string{"ca.crt": a.pem + crlf(key) + b.pem})},
				want:    []testCert{a, b},
				wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 2,
					Message: "PEM block of type " + quoted + " is not a certificate; it was not copied; skipped"}},
				secrets: []string{secret},
			},
			mergeCase{
				name:    typ + " block without END line, strict",
				sources: []Source{strictCM("team-a/cas", map[string]string{"ca.crt": cut})},
				wantErr: &SourceError{Source: "ConfigMap team-a/cas", Key: "ca.crt", Block: 1,
					Message: "malformed PEM block of type " + quoted},
				secrets: []string{secret},
			},
			mergeCase{
				name:    typ + " block without END line, lenient",
				sources: []Source{lenientCM("auto/cas", map[string]string{"ca.crt": cut + c.pem})},
				want:    []testCert{c},
				wantWarnings: []Warning{{Source: "ConfigMap auto/cas", Key: "ca.crt", Block: 1,
					Message: "malformed PEM block of type " + quoted}},
				secrets: []string{secret},
			},
		)
	}
	return cases
}

func TestMerge(t *testing.T) {
	for _, tc := range mergeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge(tc.sources, Options{Now: testNow})

			var texts []string // messages a user might see
			if err != nil {
				texts = append(texts, err.Error())
			}
			if got != nil {
				for _, w := range got.Warnings {
					texts = append(texts, w.String())
				}
			}
			for _, secret := range tc.secrets {
				require.NotEmpty(t, secret)
				for _, frag := range fragments(secret) {
					for _, text := range texts {
						require.NotContains(t, text, frag, "content of a non-certificate block leaked")
					}
				}
			}

			if tc.wantErr != nil {
				require.Error(t, err)
				assert.Nil(t, got)
				var se *SourceError
				require.True(t, errors.As(err, &se), "want *SourceError, got %T: %v", err, err)
				assert.Equal(t, tc.wantErr.Source, se.Source, "Source")
				assert.Equal(t, tc.wantErr.Key, se.Key, "Key")
				assert.Equal(t, tc.wantErr.Block, se.Block, "Block")
				assert.Contains(t, se.Message, tc.wantErr.Message)
				assert.Contains(t, err.Error(), location(se.Source, se.Key, se.Block)+": ")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			want := wantPEM(tc.want...)
			assert.Equal(t, want, string(got.PEM))
			assert.Equal(t, strings.Count(want, "-----BEGIN CERTIFICATE-----"), got.Certificates)
			require.Len(t, got.Warnings, len(tc.wantWarnings), "warnings: %v", got.Warnings)
			for i, w := range tc.wantWarnings {
				g := got.Warnings[i]
				assert.Equal(t, w.Source, g.Source, "warning %d Source", i)
				assert.Equal(t, w.Key, g.Key, "warning %d Key", i)
				assert.Equal(t, w.Block, g.Block, "warning %d Block", i)
				assert.Contains(t, g.Message, w.Message, "warning %d Message", i)
			}
		})
	}
}
