package trust

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSourceErrorAndWarningFormat(t *testing.T) {
	tests := []struct {
		name, source, key string
		block             int
		want              string
	}{
		{"key and block", "ConfigMap team-a/cas", "ca.crt", 2, "ConfigMap team-a/cas, key ca.crt, block 2: msg"},
		{"key only", "ConfigMap team-a/cas", "ca.crt", 0, "ConfigMap team-a/cas, key ca.crt: msg"},
		{"DER entry", "public roots", "", 3, "public roots, DER certificate 3: msg"},
		{"whole source", "ConfigMap team-a/empty", "", 0, "ConfigMap team-a/empty: msg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := &SourceError{Source: tc.source, Key: tc.key, Block: tc.block, Message: "msg"}
			assert.Equal(t, tc.want, err.Error())
			w := Warning{Source: tc.source, Key: tc.key, Block: tc.block, Message: "msg"}
			assert.Equal(t, tc.want, w.String())
		})
	}
}

func TestTooLargeErrorMessage(t *testing.T) {
	msg := (&TooLargeError{Bytes: 2000000, Limit: DefaultMaxBytes}).Error()
	for _, want := range []string{"2000000 bytes", "limit of 1047552 bytes", "fewer CA sources or keys", "public roots"} {
		assert.Contains(t, msg, want)
	}
}

func TestQuoteType(t *testing.T) {
	assert.Equal(t, `"PRIVATE KEY"`, quoteType("PRIVATE KEY"))
	assert.Equal(t, `"a\nb"`, quoteType("a\nb"))
	long := quoteType(strings.Repeat("é", 50))
	assert.Equal(t, `"`+strings.Repeat("é", maxTypeLength)+`..."`, long)
}

func TestSplitPEM(t *testing.T) {
	f := getFixtures(t)
	noEnd := strings.Join(strings.SplitAfter(f.caB.pem, "\n")[:3], "")
	tests := []struct {
		name string
		in   string
		want []pemBlock // der is only checked for being nil
	}{
		{"empty", "", nil},
		{"text only", "hello\n# Subject: x\n", nil},
		{"BEGIN in the middle of a line is text", "x -----BEGIN CERTIFICATE-----\n", nil},
		{"one block after text", "# c\n" + f.caA.pem, []pemBlock{{index: 1, typ: "CERTIFICATE", ok: true}}},
		{
			"a block without END line does not swallow the next one",
			noEnd + f.keyPEMs["EC PRIVATE KEY"] + f.caC.pem,
			[]pemBlock{{index: 1, typ: "CERTIFICATE"}, {index: 2, typ: "EC PRIVATE KEY", ok: true}, {index: 3, typ: "CERTIFICATE", ok: true}},
		},
		{"CRLF", crlf(f.caA.pem + f.caB.pem), []pemBlock{{index: 1, typ: "CERTIFICATE", ok: true}, {index: 2, typ: "CERTIFICATE", ok: true}}},
		{"wrong END type", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----\n", []pemBlock{{index: 1, typ: "CERTIFICATE"}}},
		{"BEGIN line without dashes", "-----BEGIN FOO\nAAAA\n", []pemBlock{{index: 1, typ: "FOO"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := splitPEM([]byte(tc.in))
			assert.Len(t, got, len(tc.want))
			for i := range min(len(got), len(tc.want)) {
				assert.Equal(t, tc.want[i].index, got[i].index, "block %d index", i)
				assert.Equal(t, tc.want[i].typ, got[i].typ, "block %d type", i)
				assert.Equal(t, tc.want[i].ok, got[i].ok, "block %d ok", i)
				assert.Equal(t, tc.want[i].ok, got[i].der != nil, "block %d der", i)
			}
		})
	}
}
