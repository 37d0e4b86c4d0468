package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/settings"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/values"
)

const (
	// odhTrustedCABundle is the ConfigMap Open Data Hub writes into every namespace.
	odhTrustedCABundle = "odh-trusted-ca-bundle"
	// caBundleKey is the key of the merged bundle, and the default key of caBundle sources.
	caBundleKey = "ca-bundle.crt"
)

// reasonError is a problem reported on the CR's status with its own reason.
type reasonError struct{ reason, message string }

func (e *reasonError) Error() string  { return e.message }
func (e *reasonError) Reason() string { return e.reason }

// trustState is what gathering the CA sources of one CR found.
type trustState struct {
	// name of the merged bundle's ConfigMap.
	name string
	// wanted is true when some CA source applies.
	wanted bool
	// sources merged, by name.
	sources []string
	// bundle is the merged bundle; nil when not wanted or on failure.
	bundle *trust.Bundle
	// failure says why the merge failed.
	failure *status.Failure
	// stored is the bundle ConfigMap as it is now, nil when absent (or not the operator's).
	stored *corev1.ConfigMap
	// conflict is set when a ConfigMap of the bundle's name exists that the operator did not write.
	conflict error
}

// bundleOwnership describes the bundle ConfigMap the operator writes for a CR.
func bundleOwnership(cr *llamav1alpha1.LlamaStackDistribution) guard.Ownership {
	return guard.Ownership{Label: LabelManaged, Owner: llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind).GroupKind(), Namespace: cr.Namespace, Name: cr.Name}
}

// mounted returns the bundle ConfigMap to mount and its content hash: the new
// bundle, or on failure the last good one.
func (t *trustState) mounted() values.Trust {
	switch {
	case t.bundle != nil:
		return values.Trust{ConfigMapName: t.name, Hash: trust.ContentHash(map[string]string{caBundleKey: string(t.bundle.PEM)}, nil)}
	case t.failure != nil && t.stored != nil:
		return values.Trust{ConfigMapName: t.name, Hash: trust.ContentHash(t.stored.Data, t.stored.BinaryData)}
	default:
		return values.Trust{}
	}
}

var (
	publicRootsOnce sync.Once
	publicRoots     [][]byte
)

// publicRootsDER are Mozilla's roots as shipped in golang.org/x/crypto's
// fallback bundle, without the roots that carry constraints a PEM bundle
// cannot express (distrust-after dates).
func publicRootsDER() [][]byte {
	publicRootsOnce.Do(func() {
		for r := range bundle.Roots() {
			if r.Constraint == nil {
				publicRoots = append(publicRoots, r.Certificate)
			}
		}
	})
	return publicRoots
}

// gatherTrust reads the CA sources of a CR and merges them. Problems the user
// fixes are in the returned state's failure; API errors are returned.
func (k *LlamaStack) gatherTrust(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution, s settings.Settings, caps values.Capabilities) (*trustState, error) {
	t := &trustState{name: naming.ChildName(cr.Name, "-ca-bundle")}
	stored, err := getOptional(ctx, k.APIReader, cr.Namespace, t.name, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	if stored != nil {
		// A ConfigMap of the bundle's name that the operator did not write is
		// the user's: it is neither mounted, nor overwritten, nor deleted.
		if err := bundleOwnership(cr).Check("ConfigMap "+cr.Namespace+"/"+t.name, stored.Labels, stored.Annotations, stored.OwnerReferences); err != nil {
			t.conflict = err
		} else {
			t.stored = stored
		}
	}

	var sources []trust.Source
	var fail = func(reason, format string, args ...any) (*trustState, error) {
		t.wanted = true
		t.failure = &status.Failure{Reason: reason, Message: fmt.Sprintf(format, args...)}
		return t, nil
	}

	// (a) the explicit caBundle: strict.
	if tc := cr.Spec.Server.TLSConfig; tc != nil && tc.CABundle != nil {
		ref := tc.CABundle
		ns := ref.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		if ns != cr.Namespace && !s.CrossNamespaceCABundles {
			return fail("CrossNamespaceRefused", "spec.server.tlsConfig.caBundle.configMapNamespace: ConfigMap %s/%s is in another namespace; copy it into %s and clear configMapNamespace, or ask the administrator to set %s: enabled in the operator settings", ns, ref.ConfigMapName, cr.Namespace, settings.KeyCrossNamespaceCABundles)
		}
		cm, err := getOptional(ctx, k.APIReader, ns, ref.ConfigMapName, &corev1.ConfigMap{})
		if err != nil {
			return nil, err
		}
		if cm == nil {
			return fail("ConfigMapNotFound", "spec.server.tlsConfig.caBundle: ConfigMap %s/%s does not exist; create it or correct configMapName", ns, ref.ConfigMapName)
		}
		keys := ref.ConfigMapKeys
		if len(keys) == 0 {
			keys = []string{caBundleKey}
		}
		sources = append(sources, trust.Source{Name: "ConfigMap " + ns + "/" + ref.ConfigMapName, Strict: true, Data: cm.Data, BinaryData: cm.BinaryData, Keys: keys})
	}

	// (b) Open Data Hub's bundle, when the namespace has one: lenient.
	odh, err := getOptional(ctx, k.APIReader, cr.Namespace, odhTrustedCABundle, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	if odh != nil {
		sources = append(sources, trust.Source{Name: "ConfigMap " + cr.Namespace + "/" + odhTrustedCABundle, Data: odh.Data, BinaryData: odh.BinaryData})
	}

	// (c), (d) OpenShift's injected ConfigMaps, rendered by the chart: lenient
	// (empty until the injectors have written them).
	switches := values.TrustSourcesFor(cr, caps)
	for _, inj := range []struct {
		on     bool
		suffix string
	}{{switches.ServiceCA, "-service-ca"}, {switches.ClusterTrustedCA, "-trusted-ca"}} {
		if !inj.on {
			continue
		}
		name := naming.ChildName(cr.Name, inj.suffix)
		cm, err := getOptional(ctx, k.APIReader, cr.Namespace, name, &corev1.ConfigMap{})
		if err != nil {
			return nil, err
		}
		src := trust.Source{Name: "ConfigMap " + cr.Namespace + "/" + name}
		if cm != nil {
			src.Data, src.BinaryData = cm.Data, cm.BinaryData
		}
		sources = append(sources, src)
	}

	if len(sources) == 0 {
		return t, nil
	}
	t.wanted = true
	if t.conflict != nil {
		t.failure = &status.Failure{Reason: reasonNameConflict, Message: t.conflict.Error()}
		return t, nil
	}
	// (e) the public roots, so that SSL_CERT_FILE keeps public endpoints reachable.
	if switches.PublicRoots {
		sources = append(sources, trust.Source{Name: "public roots", DER: publicRootsDER()})
	}
	for _, src := range sources {
		t.sources = append(t.sources, src.Name)
	}
	b, err := trust.Merge(sources, trust.Options{})
	var se *trust.SourceError
	var tl *trust.TooLargeError
	switch {
	case errors.As(err, &se):
		return fail("InvalidCertificate", "%v", err)
	case errors.As(err, &tl):
		return fail("BundleTooLarge", "%v", err)
	case err != nil:
		return fail("InvalidCertificate", "%v", err)
	}
	if b.Certificates == 0 {
		// An empty file at SSL_CERT_FILE would fail every TLS connection.
		return fail("NoCertificates", "the CA sources (%s) hold no certificate yet, so no bundle is mounted and the image's own trust store stays in use; add a certificate to a source, or turn spec.server.tlsConfig.publicRoots back on", strings.Join(t.sources, ", "))
	}
	t.bundle = b
	return t, nil
}

// writeBundle makes the bundle ConfigMap hold the merged bundle, or removes
// it when no CA source applies any more. On a failed merge it leaves the last
// good bundle alone.
func (k *LlamaStack) writeBundle(ctx context.Context, c client.Client, rec record.EventRecorder, cr *llamav1alpha1.LlamaStackDistribution, t *trustState) error {
	switch {
	case t.bundle != nil:
		want := map[string]string{caBundleKey: string(t.bundle.PEM)}
		if t.stored != nil && maps.Equal(t.stored.Data, want) && len(t.stored.BinaryData) == 0 && metav1.IsControlledBy(t.stored, cr) {
			return nil
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: t.name}}
		if t.stored != nil {
			cm = t.stored.DeepCopy()
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[LabelManaged] = "true"
		cm.Labels["app.kubernetes.io/instance"] = naming.ChildName(cr.Name, "")
		cm.Labels["app.kubernetes.io/component"] = "ca-bundle"
		cm.Data, cm.BinaryData = want, nil
		ref := metav1.NewControllerRef(cr, llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind))
		cm.OwnerReferences = []metav1.OwnerReference{*ref}
		var err error
		if t.stored == nil {
			err = c.Create(ctx, cm)
		} else {
			err = c.Update(ctx, cm)
		}
		if err != nil {
			return fmt.Errorf("write CA bundle ConfigMap %s: %w", t.name, err)
		}
		rec.Eventf(cr, corev1.EventTypeNormal, "CABundleUpdated", "ConfigMap %s holds %d certificates merged from %s", t.name, t.bundle.Certificates, strings.Join(t.sources, ", "))
		if len(t.bundle.Warnings) > 0 {
			rec.Eventf(cr, corev1.EventTypeWarning, "CABundleWarnings", "%s", warningSummary(t.bundle.Warnings))
		}
	case !t.wanted && t.stored != nil:
		if err := c.Delete(ctx, t.stored, client.Preconditions{UID: &t.stored.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove CA bundle ConfigMap %s: %w", t.name, err)
		}
	}
	return nil
}

// warningSummary lists the merge warnings, at most five of them.
func warningSummary(ws []trust.Warning) string {
	var parts []string
	for i, w := range ws {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ws)-5))
			break
		}
		where := w.Source
		if w.Key != "" {
			where += ", key " + w.Key
		}
		if w.Block > 0 {
			where += fmt.Sprintf(", block %d", w.Block)
		}
		parts = append(parts, where+": "+w.Message)
	}
	return strings.Join(parts, "; ")
}

// userConfigHash reads userConfig's ConfigMap and hashes its content.
func (k *LlamaStack) userConfigHash(ctx context.Context, cr *llamav1alpha1.LlamaStackDistribution) (string, error) {
	uc := cr.Spec.Server.UserConfig
	if uc == nil || (uc.ConfigMapNamespace != "" && uc.ConfigMapNamespace != cr.Namespace) {
		return "", nil // a cross-namespace reference is refused by the translation
	}
	cm, err := getOptional(ctx, k.APIReader, cr.Namespace, uc.ConfigMapName, &corev1.ConfigMap{})
	if err != nil {
		return "", err
	}
	if cm == nil {
		return "", &reasonError{reason: "UserConfigNotFound", message: fmt.Sprintf("spec.server.userConfig.configMapName: ConfigMap %s/%s does not exist; create it (key config.yaml) or correct the name", cr.Namespace, uc.ConfigMapName)}
	}
	if _, ok := cm.Data["config.yaml"]; !ok {
		if _, ok := cm.BinaryData["config.yaml"]; !ok {
			keys := slices.Sorted(maps.Keys(cm.Data))
			return "", &reasonError{reason: "UserConfigInvalid", message: fmt.Sprintf("spec.server.userConfig.configMapName: ConfigMap %s/%s has no key config.yaml (it has: %s); the server reads its run configuration from that key", cr.Namespace, uc.ConfigMapName, strings.Join(keys, ", "))}
		}
	}
	return trust.ContentHash(cm.Data, cm.BinaryData), nil
}

// configMapRefs are the ConfigMaps a CR reads, as "namespace/name": a change
// to any of them reconciles the CR.
func configMapRefs(cr *llamav1alpha1.LlamaStackDistribution) []string {
	refs := []string{cr.Namespace + "/" + odhTrustedCABundle}
	if uc := cr.Spec.Server.UserConfig; uc != nil {
		ns := uc.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+uc.ConfigMapName)
	}
	if tc := cr.Spec.Server.TLSConfig; tc != nil && tc.CABundle != nil {
		ns := tc.CABundle.ConfigMapNamespace
		if ns == "" {
			ns = cr.Namespace
		}
		refs = append(refs, ns+"/"+tc.CABundle.ConfigMapName)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}
