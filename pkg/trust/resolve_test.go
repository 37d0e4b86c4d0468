package trust

import (
	"errors"
	"strings"
	"testing"
)

// lookupOf serves ConfigMaps from a map of "namespace/name".
func lookupOf(cms map[string]*ConfigMap) (Lookup, *[]string) {
	var asked []string
	return func(ns, name string) (*ConfigMap, error) {
		asked = append(asked, ns+"/"+name)
		return cms[ns+"/"+name], nil
	}, &asked
}

func TestResolve(t *testing.T) {
	f := getFixtures(t)
	explicit := &Reference{Field: "spec.x.caBundle", Name: "cas"}
	for _, tc := range []struct {
		name    string
		req     Request
		cms     map[string]*ConfigMap
		reason  string   // "" for no failure
		msg     string   // in the message
		sources []string // merged, for a success
		certs   int      // in the bundle, for a success
		wanted  bool
		mount   string // "bundle", "last good" or ""
	}{{
		name: "nothing applies", req: Request{Namespace: "a", PublicRoots: true},
		wanted: false, mount: "",
	}, {
		name: "explicit, strict, with the default key", req: Request{Namespace: "a", Explicit: explicit},
		cms:     map[string]*ConfigMap{"a/cas": {Data: map[string]string{BundleKey: f.caA.pem}}},
		sources: []string{"ConfigMap a/cas"}, certs: 1, wanted: true, mount: "bundle",
	}, {
		name: "explicit keys", req: Request{Namespace: "a", Explicit: &Reference{Field: "spec.x.caBundle", Name: "cas", Keys: []string{"one", "two"}}},
		cms:     map[string]*ConfigMap{"a/cas": {Data: map[string]string{"one": f.caA.pem, "two": f.caB.pem, BundleKey: f.caC.pem}}},
		sources: []string{"ConfigMap a/cas"}, certs: 2, wanted: true, mount: "bundle",
	}, {
		name: "explicit missing, last good mounted", req: Request{Namespace: "a", Explicit: explicit, LastGood: "h0"},
		reason: ReasonConfigMapNotFound, msg: "spec.x.caBundle: ConfigMap a/cas does not exist", wanted: true, mount: "last good",
	}, {
		name: "explicit broken is refused, nothing merged", req: Request{Namespace: "a", Explicit: explicit},
		cms:    map[string]*ConfigMap{"a/cas": {Data: map[string]string{BundleKey: f.caA.pem + f.keyPEMs["PRIVATE KEY"]}}},
		reason: ReasonInvalidCertificate, msg: "ConfigMap a/cas, key ca-bundle.crt, block 2", wanted: true, mount: "",
	}, {
		name: "another namespace refused by default", req: Request{Namespace: "a", Explicit: &Reference{Field: "spec.x.caBundle", Namespace: "b", Name: "cas"}, CrossNamespaceSetting: "cross-ns"},
		cms:    map[string]*ConfigMap{"b/cas": {Data: map[string]string{BundleKey: f.caA.pem}}},
		reason: ReasonCrossNamespaceRefused, msg: "spec.x.caBundle.configMapNamespace: ConfigMap b/cas is in another namespace; copy it into a and clear configMapNamespace, or ask the administrator to set cross-ns: enabled", wanted: true,
	}, {
		name: "another namespace when allowed", req: Request{Namespace: "a", Explicit: &Reference{Field: "spec.x.caBundle", Namespace: "b", Name: "cas"}, CrossNamespace: true},
		cms:     map[string]*ConfigMap{"b/cas": {Data: map[string]string{BundleKey: f.caA.pem}}},
		sources: []string{"ConfigMap b/cas"}, certs: 1, wanted: true, mount: "bundle",
	}, {
		name: "Open Data Hub's bundle is lenient", req: Request{Namespace: "a"},
		cms:     map[string]*ConfigMap{"a/" + ODHBundle: {Data: map[string]string{"ca-bundle.crt": f.caA.pem, "odh-ca-bundle.crt": "garbage"}}},
		sources: []string{"ConfigMap a/" + ODHBundle}, certs: 1, wanted: true, mount: "bundle",
	}, {
		name: "precedence: explicit, Open Data Hub, injected, public roots", req: Request{Namespace: "a", Explicit: explicit, Injected: []string{"x-service-ca", "x-trusted-ca"}, PublicRoots: true},
		cms: map[string]*ConfigMap{
			"a/cas": {Data: map[string]string{BundleKey: f.caA.pem}}, "a/" + ODHBundle: {Data: map[string]string{"k": f.caB.pem}},
			"a/x-service-ca": {Data: map[string]string{"service-ca.crt": f.caC.pem}},
		},
		sources: []string{"ConfigMap a/cas", "ConfigMap a/" + ODHBundle, "ConfigMap a/x-service-ca", "ConfigMap a/x-trusted-ca", "public roots"},
		certs:   3 + len(PublicRoots()), wanted: true, mount: "bundle",
	}, {
		name: "injected, not yet written, hold no certificate", req: Request{Namespace: "a", Injected: []string{"x-service-ca"}, PublicRootsField: "spec.x.publicRoots"},
		reason: ReasonNoCertificates, msg: "the CA sources (ConfigMap a/x-service-ca) hold no certificate yet, so no bundle is mounted and the image's own trust store stays in use; add a certificate to a source, or turn spec.x.publicRoots back on", wanted: true,
	}, {
		name: "the bundle's name is taken", req: Request{Namespace: "a", Conflict: errors.New("ConfigMap a/x-ca-bundle exists and is not ours")},
		cms:    map[string]*ConfigMap{"a/" + ODHBundle: {Data: map[string]string{"k": f.caA.pem}}},
		reason: ReasonNameConflict, msg: "ConfigMap a/x-ca-bundle exists and is not ours", wanted: true,
	}, {
		name: "a name conflict without any source is no problem", req: Request{Namespace: "a", Conflict: errors.New("taken")},
		wanted: false,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			lookup, _ := lookupOf(tc.cms)
			out, err := Resolve(tc.req, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if out.Wanted != tc.wanted {
				t.Errorf("wanted %v, want %v", out.Wanted, tc.wanted)
			}
			if out.Reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", out.Reason, out.Message, tc.reason)
			}
			if !strings.Contains(out.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", out.Message, tc.msg)
			}
			if tc.reason == "" && tc.wanted {
				if out.Bundle == nil || out.Bundle.Certificates != tc.certs {
					t.Fatalf("bundle %+v, want %d certificates", out.Bundle, tc.certs)
				}
				if strings.Join(out.Sources, "|") != strings.Join(tc.sources, "|") {
					t.Errorf("sources %q, want %q", out.Sources, tc.sources)
				}
			}
			switch tc.mount {
			case "bundle":
				if want := ContentHash(map[string]string{BundleKey: string(out.Bundle.PEM)}, nil); out.MountHash() != want {
					t.Errorf("mounts %q, want the new bundle %q", out.MountHash(), want)
				}
			case "last good":
				if out.MountHash() != tc.req.LastGood {
					t.Errorf("mounts %q, want the last good %q", out.MountHash(), tc.req.LastGood)
				}
			default:
				if out.MountHash() != "" {
					t.Errorf("mounts %q, want nothing", out.MountHash())
				}
			}
		})
	}
}

// A refused source is not looked up, and lookup errors are returned as they are.
func TestResolveLookups(t *testing.T) {
	lookup, asked := lookupOf(nil)
	_, err := Resolve(Request{Namespace: "a", Explicit: &Reference{Namespace: "b", Name: "cas"}}, lookup)
	if err != nil || len(*asked) != 0 {
		t.Fatalf("err %v, asked %v: another namespace must not be read", err, *asked)
	}
	broken := errors.New("connection refused")
	_, err = Resolve(Request{Namespace: "a", Injected: []string{"x"}}, func(ns, name string) (*ConfigMap, error) {
		if name == "x" {
			return nil, broken
		}
		return nil, nil
	})
	if !errors.Is(err, broken) {
		t.Fatalf("got %v", err)
	}
}

func TestSummary(t *testing.T) {
	var ws []Warning
	for i := 1; i <= 7; i++ {
		ws = append(ws, Warning{Source: "ConfigMap a/b", Key: "k", Block: i, Message: "skipped"})
	}
	got := Summary(ws)
	if !strings.HasPrefix(got, "ConfigMap a/b, key k, block 1: skipped; ConfigMap a/b, key k, block 2: skipped") || !strings.HasSuffix(got, "block 5: skipped; and 2 more") {
		t.Fatalf("summary %q", got)
	}
	if got := Summary(ws[:1]); got != ws[0].String() {
		t.Fatalf("one warning: %q", got)
	}
}

func TestPublicRoots(t *testing.T) {
	roots := PublicRoots()
	if len(roots) < 100 {
		t.Fatalf("%d public roots", len(roots))
	}
	b, err := Merge([]Source{{Name: "public roots", DER: roots}}, Options{})
	if err != nil || b.Certificates != len(roots) {
		t.Fatalf("the public roots must merge whole: %v", err)
	}
}
