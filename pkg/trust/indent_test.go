package trust

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An indented BEGIN line (a YAML block scalar indented twice) would drop its
// certificate without a word: a strict source refuses it, naming the line; a
// lenient one warns.
func TestIndentedBeginLine(t *testing.T) {
	f := getFixtures(t)
	indented := f.caA.pem + "  " + strings.ReplaceAll(strings.TrimSuffix(f.caB.pem, "\n"), "\n", "\n  ") + "\n"
	firstLineOfB := strings.Count(f.caA.pem, "\n") + 1

	_, err := Merge([]Source{{Name: "ConfigMap ns/corp", Strict: true, Data: map[string]string{"ca.crt": indented}}}, Options{Now: testNow})
	var se *SourceError
	require.True(t, errors.As(err, &se), "want a SourceError, got %v", err)
	assert.Equal(t, "ca.crt", se.Key)
	assert.Contains(t, se.Message, "is indented")
	assert.Contains(t, se.Message, "line "+strconv.Itoa(firstLineOfB))

	b, err := Merge([]Source{{Name: "ConfigMap ns/odh", Data: map[string]string{"ca.crt": indented}}}, Options{Now: testNow})
	require.NoError(t, err)
	assert.Equal(t, 1, b.Certificates, "the unindented certificate is kept")
	require.NotEmpty(t, b.Warnings)
	assert.Contains(t, b.Warnings[0].Message, "is indented")

	// Text that merely mentions the marker mid-line is not a BEGIN line.
	assert.Zero(t, indentedBegin([]byte("comment: see -----BEGIN CERTIFICATE----- below\n")))
}
