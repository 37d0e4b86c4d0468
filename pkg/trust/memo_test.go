package trust

import (
	"bytes"
	"testing"
	"time"
)

// The memo gives what Merge gives, the same result again for the same
// inputs within its minute, and a fresh merge for any change of input, for an
// older result, and for inputs that only a naive concatenation would confuse.
func TestMergeMemo(t *testing.T) {
	f := getFixtures(t)
	m := &MergeCache{}
	src := []Source{{Name: "odh", Data: map[string]string{"a.crt": f.caA.pem}}, {Name: "public roots", DER: [][]byte{f.caB.der}}}

	first, err := m.merge(src, testNow)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Merge(src, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.PEM, direct.PEM) || first.Certificates != 2 {
		t.Fatalf("memo merge %q (%d certificates), Merge %q", first.PEM, first.Certificates, direct.PEM)
	}
	again, _ := m.merge(src, testNow.Add(30*time.Second))
	if again != first {
		t.Error("the same inputs within a minute merged again")
	}
	later, _ := m.merge(src, testNow.Add(2*time.Minute))
	if later == first {
		t.Error("a result two minutes old was returned")
	}

	changed := []Source{{Name: "odh", Data: map[string]string{"a.crt": f.caC.pem}}, src[1]}
	other, _ := m.merge(changed, testNow.Add(2*time.Minute))
	if other == later || !bytes.Contains(other.PEM, []byte(f.caC.pem[30:90])) {
		t.Errorf("an edited source gave the old bundle")
	}

	for name, pair := range map[string][2][]Source{
		"key and value boundary": {{{Name: "s", Data: map[string]string{"ab": "c"}}}, {{Name: "s", Data: map[string]string{"a": "bc"}}}},
		"no keys and all keys":   {{{Name: "s", Keys: []string{}}}, {{Name: "s"}}},
		"strict and lenient":     {{{Name: "s", Strict: true}}, {{Name: "s"}}},
		"Data and BinaryData":    {{{Name: "s", Data: map[string]string{"k": "v"}}}, {{Name: "s", BinaryData: map[string][]byte{"k": []byte("v")}}}},
		"DER split":              {{{Name: "s", DER: [][]byte{[]byte("ab")}}}, {{Name: "s", DER: [][]byte{[]byte("a"), []byte("b")}}}},
		"source boundary":        {{{Name: "ab"}, {Name: "c"}}, {{Name: "a"}, {Name: "bc"}}},
	} {
		if sourcesKey(pair[0]) == sourcesKey(pair[1]) {
			t.Errorf("%s: two inputs share a key", name)
		}
	}

	for i := 0; i < 2*memoSize; i++ {
		_, _ = m.merge([]Source{{Name: "odh", DER: [][]byte{{byte(i)}}}}, testNow)
	}
	if len(m.entries) != memoSize {
		t.Errorf("the memo holds %d results, want at most %d", len(m.entries), memoSize)
	}
}

// A refusal is remembered as well: the same bad input gives the same error.
func TestMergeMemoKeepsErrors(t *testing.T) {
	m := &MergeCache{}
	bad := []Source{{Name: "mine", Strict: true, Data: map[string]string{"ca.crt": "not a certificate"}}}
	_, err1 := m.merge(bad, testNow)
	_, err2 := m.merge(bad, testNow)
	if err1 == nil || err1 != err2 { //nolint:errorlint // the memo hands back the very error it stored
		t.Errorf("errors %v and %v", err1, err2)
	}
}

// A namespace of CRs that read one CA bundle costs one merge, not one each.
func BenchmarkResolveSharedBundle(b *testing.B) {
	f := getFixtures(b)
	odh := &ConfigMap{Data: map[string]string{"ca-bundle.crt": f.caA.pem}}
	lookup := func(_, name string) (*ConfigMap, error) {
		if name == ODHBundle {
			return odh, nil
		}
		return nil, nil
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Resolve(Request{Namespace: "ns", PublicRoots: true}, lookup); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergeSharedBundle(b *testing.B) {
	f := getFixtures(b)
	src := []Source{{Name: "odh", Data: map[string]string{"ca-bundle.crt": f.caA.pem}}, {Name: "public roots", DER: PublicRoots()}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Merge(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
