package trust

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

const (
	// ODHBundle is the ConfigMap Open Data Hub writes into every namespace
	// (DSCInitialization's trustedCABundle); every key of it is read.
	ODHBundle = "odh-trusted-ca-bundle"
	// BundleKey is the key of the merged bundle, and the default key of an
	// explicit source.
	BundleKey = "ca-bundle.crt"
)

// Failure reasons of an Outcome, as the TrustReady condition reports them.
const (
	ReasonCrossNamespaceRefused = "CrossNamespaceRefused"
	ReasonConfigMapNotFound     = "ConfigMapNotFound"
	ReasonInvalidCertificate    = "InvalidCertificate"
	ReasonBundleTooLarge        = "BundleTooLarge"
	ReasonNoCertificates        = "NoCertificates"
	ReasonNameConflict          = "NameConflict"
)

// Reference is a ConfigMap a user named as a CA source (strict).
type Reference struct {
	// Field is the CR field that names it, for messages
	// (spec.server.tlsConfig.caBundle); its subfields are configMapName,
	// configMapNamespace and configMapKeys.
	Field string
	// Namespace of the ConfigMap; "" is the CR's.
	Namespace, Name string
	// Keys to read; BundleKey when empty.
	Keys []string
	// NameField is the subfield of Field that holds the name, for messages;
	// "configMapName" when empty.
	NameField string
}

// Request is what applies to one CR, for Resolve.
type Request struct {
	// Namespace of the CR.
	Namespace string
	// Explicit is the ConfigMap the user named, nil for none.
	Explicit *Reference
	// AlsoExplicit are more ConfigMaps the user named (a kind whose field
	// lists several), merged after Explicit and as strictly.
	AlsoExplicit []Reference
	// CrossNamespace allows Explicit to name another namespace;
	// CrossNamespaceSetting is the operator setting that allows it, for the message.
	CrossNamespace        bool
	CrossNamespaceSetting string
	// Injected are ConfigMaps of the CR's namespace that the platform fills
	// (OpenShift's service CA and trusted CA injection): lenient, and empty
	// until the injector has written them.
	Injected []string
	// PublicRoots adds the public roots to a bundle that is mounted;
	// PublicRootsField is the switch that turns them on, for the message.
	PublicRoots      bool
	PublicRootsField string
	// Conflict is set when the merged bundle's name is taken by an object
	// the operator did not write: nothing is merged or mounted.
	Conflict error
	// LastGood is the content hash of the bundle written earlier; "" when none.
	LastGood string
	// Merges remembers the last merges (nil: merge every time).
	Merges *MergeCache
}

// ConfigMap is the content of a ConfigMap source.
type ConfigMap struct {
	Data       map[string]string
	BinaryData map[string][]byte
}

// Lookup reads a ConfigMap; nil without error when it does not exist.
type Lookup func(namespace, name string) (*ConfigMap, error)

// Outcome is what resolving and merging the CA sources of one CR gave.
type Outcome struct {
	// Wanted is true when some CA source applies.
	Wanted bool
	// Sources merged, by name, in precedence order.
	Sources []string
	// Bundle is the merged bundle; nil when not wanted or on a failure.
	Bundle *Bundle
	// Reason and Message say why no bundle was merged (Reason* constants);
	// empty on success.
	Reason, Message string
	// LastGood is Request.LastGood: the bundle that stays mounted on a failure.
	LastGood string
}

// Failed is true when a source applies and no bundle could be merged.
func (o Outcome) Failed() bool { return o.Reason != "" }

// MountHash is the content hash of the bundle the pods mount: the merged
// one, or on a failure the last good one; "" mounts none.
func (o Outcome) MountHash() string {
	switch {
	case o.Bundle != nil:
		return ContentHash(map[string]string{BundleKey: string(o.Bundle.PEM)}, nil)
	case o.Failed():
		return o.LastGood
	}
	return ""
}

// Resolve applies the source precedence: (a) the explicit ConfigMap, strict,
// refused in another namespace unless allowed; (b) Open Data Hub's bundle of
// the namespace, lenient; (c) the injected ConfigMaps, lenient; with any of
// them, (d) the public roots, so that SSL_CERT_FILE keeps public endpoints
// reachable. Problems the user fixes are in the Outcome; errors are lookup
// errors, to be retried.
func Resolve(req Request, lookup Lookup) (Outcome, error) {
	out := Outcome{LastGood: req.LastGood}
	fail := func(reason, format string, args ...any) (Outcome, error) {
		out.Wanted, out.Reason, out.Message = true, reason, fmt.Sprintf(format, args...)
		return out, nil
	}
	var sources []Source
	var explicit []Reference
	if req.Explicit != nil {
		explicit = append(explicit, *req.Explicit)
	}
	for _, ref := range append(explicit, req.AlsoExplicit...) {
		ns := ref.Namespace
		if ns == "" {
			ns = req.Namespace
		}
		if ns != req.Namespace && !req.CrossNamespace {
			return fail(ReasonCrossNamespaceRefused, "%s.configMapNamespace: ConfigMap %s/%s is in another namespace; copy it into %s and clear configMapNamespace, or ask the administrator to set %s: enabled in the operator settings", ref.Field, ns, ref.Name, req.Namespace, req.CrossNamespaceSetting)
		}
		cm, err := lookup(ns, ref.Name)
		if err != nil {
			return Outcome{}, err
		}
		if cm == nil {
			nameField := ref.NameField
			if nameField == "" {
				nameField = "configMapName"
			}
			return fail(ReasonConfigMapNotFound, "%s: ConfigMap %s/%s does not exist; create it or correct %s", ref.Field, ns, ref.Name, nameField)
		}
		keys := ref.Keys
		if len(keys) == 0 {
			keys = []string{BundleKey}
		}
		sources = append(sources, Source{Name: "ConfigMap " + ns + "/" + ref.Name, Strict: true, Data: cm.Data, BinaryData: cm.BinaryData, Keys: keys})
	}
	odh, err := lookup(req.Namespace, ODHBundle)
	if err != nil {
		return Outcome{}, err
	}
	if odh != nil {
		sources = append(sources, Source{Name: "ConfigMap " + req.Namespace + "/" + ODHBundle, Data: odh.Data, BinaryData: odh.BinaryData})
	}
	for _, name := range req.Injected {
		cm, err := lookup(req.Namespace, name)
		if err != nil {
			return Outcome{}, err
		}
		src := Source{Name: "ConfigMap " + req.Namespace + "/" + name}
		if cm != nil {
			src.Data, src.BinaryData = cm.Data, cm.BinaryData
		}
		sources = append(sources, src)
	}
	if len(sources) == 0 {
		return out, nil
	}
	out.Wanted = true
	if req.Conflict != nil {
		out.Reason, out.Message = ReasonNameConflict, req.Conflict.Error()
		return out, nil
	}
	if req.PublicRoots {
		sources = append(sources, Source{Name: "public roots", DER: PublicRoots()})
	}
	for _, src := range sources {
		out.Sources = append(out.Sources, src.Name)
	}
	b, err := req.Merges.merge(sources, time.Now())
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		return fail(ReasonBundleTooLarge, "%v", err)
	case err != nil:
		return fail(ReasonInvalidCertificate, "%v", err)
	case b.Certificates == 0:
		// An empty file at SSL_CERT_FILE would fail every TLS connection.
		fix := "add a certificate to a source"
		if req.PublicRootsField != "" {
			fix += ", or turn " + req.PublicRootsField + " back on"
		}
		return fail(ReasonNoCertificates, "the CA sources (%s) hold no certificate yet, so no bundle is mounted and the image's own trust store stays in use; %s", strings.Join(out.Sources, ", "), fix)
	}
	out.Bundle = b
	return out, nil
}

// Summary lists warnings for an event, at most five of them.
func Summary(ws []Warning) string {
	var parts []string
	for i, w := range ws {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ws)-5))
			break
		}
		parts = append(parts, w.String())
	}
	return strings.Join(parts, "; ")
}
