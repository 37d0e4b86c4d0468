package trust

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultMaxBytes(t *testing.T) {
	assert.Equal(t, 1048576-1024, DefaultMaxBytes)
}

func TestMergeSizeLimit(t *testing.T) {
	f := getFixtures(t)
	small := []Source{strictCM("team-a/cas", map[string]string{"ca.crt": f.caA.pem + f.caB.pem})}
	size := len(wantPEM(f.caA, f.caB))

	// About 60 KB each: 20 of them are over DefaultMaxBytes.
	big := bigCerts(t, 20, 60_000)
	var bigPEM strings.Builder
	for _, c := range big {
		bigPEM.WriteString(c.pem)
	}
	require.Greater(t, bigPEM.Len(), DefaultMaxBytes)
	large := []Source{strictCM("team-a/big", map[string]string{"ca.crt": bigPEM.String()})}

	tests := []struct {
		name      string
		sources   []Source
		maxBytes  int
		wantLimit int // 0: no error
	}{
		{"exactly the limit", small, size, 0},
		{"one byte over the limit", small, size - 1, size - 1},
		{"negative means no limit", large, -1, 0},
		{"zero means DefaultMaxBytes, under it", small, 0, 0},
		{"zero means DefaultMaxBytes, over it", large, 0, DefaultMaxBytes},
		{"the limit counts the merged output, after dedup", []Source{small[0], small[0]}, size, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge(tc.sources, Options{MaxBytes: tc.maxBytes, Now: testNow})
			if tc.wantLimit == 0 {
				require.NoError(t, err)
				require.NotNil(t, got)
				return
			}
			assert.Nil(t, got)
			var tl *TooLargeError
			require.True(t, errors.As(err, &tl), "want *TooLargeError, got %T: %v", err, err)
			assert.Equal(t, tc.wantLimit, tl.Limit)
			// Bytes is the size of the merged PEM.
			unlimited, err := Merge(tc.sources, Options{MaxBytes: -1, Now: testNow})
			require.NoError(t, err)
			assert.Equal(t, len(unlimited.PEM), tl.Bytes)
		})
	}
}

func TestMergeOutputFormat(t *testing.T) {
	f := getFixtures(t)
	in := "# comment\r\n" + crlf(f.caA.pem) + "text\n" + f.caB.pem + f.caC.pem
	got, err := Merge([]Source{strictCM("team-a/cas", map[string]string{"ca.crt": in})}, Options{Now: testNow})
	require.NoError(t, err)
	require.Equal(t, 3, got.Certificates)

	out := string(got.PEM)
	require.True(t, strings.HasSuffix(out, "-----END CERTIFICATE-----\n"), "ends with an END line and a newline")
	assert.NotContains(t, out, "\r")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	inBlock := false
	begins := 0
	for i, line := range lines {
		switch {
		case line == "-----BEGIN CERTIFICATE-----":
			require.False(t, inBlock, "line %d: BEGIN inside a block", i+1)
			inBlock = true
			begins++
		case line == "-----END CERTIFICATE-----":
			require.True(t, inBlock, "line %d: END outside a block", i+1)
			inBlock = false
		default:
			require.True(t, inBlock, "line %d: text between blocks: %q", i+1, line)
			require.LessOrEqual(t, len(line), 64, "line %d", i+1)
			require.NotEmpty(t, line, "line %d", i+1)
			next := lines[i+1]
			if next != "-----END CERTIFICATE-----" {
				require.Len(t, line, 64, "line %d: only the last line of a block may be short", i+1)
			}
		}
	}
	assert.False(t, inBlock)
	assert.Equal(t, 3, begins)
}

func TestMergeEmptyResult(t *testing.T) {
	got, err := Merge(nil, Options{})
	require.NoError(t, err)
	assert.NotNil(t, got.PEM)
	assert.Empty(t, got.PEM)
	assert.Zero(t, got.Certificates)
	assert.Empty(t, got.Warnings)
}

// TestMergeDeterministic shuffles sources, keys and map insertion order: the
// PEM must not change.
func TestMergeDeterministic(t *testing.T) {
	f := getFixtures(t)
	type kv struct{ k, v string }
	sourceSpecs := []struct {
		name   string
		strict bool
		data   []kv
		der    [][]byte
	}{
		{"ConfigMap team-a/cas", true, []kv{{"a.crt", f.caA.pem}, {"b.crt", f.caB.pem + f.caA.pem}, {"x.crt", f.expired.pem}}, nil},
		{"ConfigMap team-b/cas", true, []kv{{"ca.crt", crlf(f.caC.pem + f.leaf.pem)}}, nil},
		{"auto", false, []kv{{"ca.crt", f.notYet.pem + "junk"}, {"key", f.keyPEMs["PRIVATE KEY"]}}, nil},
		{"public roots", false, nil, [][]byte{f.caB.der, f.caC.der}},
	}
	build := func(r *rand.Rand) []Source {
		var sources []Source
		for _, s := range sourceSpecs {
			data := slices.Clone(s.data)
			r.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
			src := Source{Name: s.name, Strict: s.strict, DER: slices.Clone(s.der)}
			r.Shuffle(len(src.DER), func(i, j int) { src.DER[i], src.DER[j] = src.DER[j], src.DER[i] })
			for _, e := range data {
				if r.IntN(2) == 0 {
					if src.Data == nil {
						src.Data = map[string]string{}
					}
					src.Data[e.k] = e.v
				} else {
					if src.BinaryData == nil {
						src.BinaryData = map[string][]byte{}
					}
					src.BinaryData[e.k] = []byte(e.v)
				}
			}
			sources = append(sources, src)
		}
		r.Shuffle(len(sources), func(i, j int) { sources[i], sources[j] = sources[j], sources[i] })
		return sources
	}

	want := wantPEM(f.caA, f.caB, f.caC, f.expired, f.leaf, f.notYet)
	first, err := Merge(build(rand.New(rand.NewPCG(1, 1))), Options{Now: testNow})
	require.NoError(t, err)
	require.Equal(t, want, string(first.PEM))
	for i := range 100 {
		sources := build(rand.New(rand.NewPCG(uint64(i), 2)))
		got, err := Merge(sources, Options{Now: testNow})
		require.NoError(t, err)
		require.Equal(t, string(first.PEM), string(got.PEM), "iteration %d", i)
		// Same inputs, same everything, warnings included.
		again, err := Merge(sources, Options{Now: testNow})
		require.NoError(t, err)
		require.Equal(t, got, again, "iteration %d", i)
	}
}

func TestMergeZeroNowUsesTheClock(t *testing.T) {
	f := getFixtures(t)
	src := []Source{strictCM("team-a/cas", map[string]string{"ca.crt": f.expired.pem})}

	got, err := Merge(src, Options{})
	require.NoError(t, err)
	require.Len(t, got.Warnings, 1, "the clock is past 2021: the expired CA warns")
	assert.Contains(t, got.Warnings[0].Message, "expired")

	got, err = Merge(src, Options{Now: time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	assert.Empty(t, got.Warnings, "in 2020 the expired CA was still valid")
}

func TestMergeDoesNotChangeInputs(t *testing.T) {
	f := getFixtures(t)
	der := [][]byte{slices.Clone(f.caA.der)}
	src := []Source{{Name: "public roots", DER: der, Data: map[string]string{"b": f.caB.pem}}}
	got, err := Merge(src, Options{Now: testNow})
	require.NoError(t, err)
	assert.Nil(t, src[0].Keys)
	assert.Len(t, src[0].Data, 1)
	// Changing the input afterwards does not change the bundle.
	before := string(got.PEM)
	der[0][10] ^= 0xff
	assert.Equal(t, before, string(got.PEM))
}
