package olm

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/argocd"
	olmgen "github.com/ai-stack-operator/ai-stack-operator/pkg/olm"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// olmv1NS is OLM v1's own namespace.
const olmv1NS = "olmv1-system"

// loopbackTLS writes a CA and a certificate it signs for 127.0.0.1 and
// localhost: the registry's and catalogd's. It returns the folder of the
// CA (what OLM v1 takes as its trusted authorities) and the certificate
// and key files.
func loopbackTLS(t *testing.T) (caDir, cert, key string) {
	t.Helper()
	d := filepath.Join(dir, "tls")
	caDir = filepath.Join(d, "cas")
	if err := os.MkdirAll(caDir, 0o700); err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "olm-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(d, "tls.crt"), filepath.Join(d, "tls.key")
	for f, b := range map[string][]byte{
		filepath.Join(caDir, "ca.crt"): pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:                           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:                            pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caDir, cert, key
}

// listening waits until something accepts connections on addr.
func listening(t *testing.T, what, addr string) {
	t.Helper()
	env.Eventually(t, what+" on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
}

// push makes an image of a directory (bin/oci/push) and returns its
// reference by digest.
func push(t *testing.T, caDir, src, ref, at string, labels map[string]string) string {
	t.Helper()
	args := []string{"-ca", filepath.Join(caDir, "ca.crt"), "-at", at}
	for k, v := range labels {
		args = append(args, "-label", k+"="+v)
	}
	out, err := exec.Command(tool(t, "oci/push"), append(args, src, ref)...).CombinedOutput()
	if err != nil {
		t.Fatalf("push %s: %v: %s", ref, err, out)
	}
	return strings.TrimSpace(string(out))
}

// OLM v1 where it can run here: catalogd and operator-controller v1.5.1 as
// processes, a registry on loopback (distribution v3) holding the catalog
// and bundle images made from catalog/ and bundle/ (the catalog's bundle
// image pointed at the loopback copy), config/gitops/operator-olmv1 applied
// with the catalog image's reference. catalogd unpacks and serves the
// catalog, the ClusterExtension resolves the channel and operator-controller
// installs the bundle's CRDs, RBAC and Deployment; config/argocd's health of
// both is Healthy; the operator, as the ServiceAccount OLM v1 made with the
// RBAC it rendered from the CSV, serves a CR of each kind to Ready. A v0.2.0
// release pushed under a new catalog tag is installed once the
// ClusterCatalog names it, the CRs' workloads untouched. Deleting the
// ClusterExtension uninstalls everything, the CRDs included.
func TestOLMv1InstallsUpgradesAndUninstalls(t *testing.T) {
	ctx := context.Background()
	setup(t, filepath.Join(framework.Root(), "bin", "olmv1", "crds"))
	if err := olmc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmv1NS}}); err != nil {
		t.Fatal(err)
	}
	caDir, cert, key := loopbackTLS(t)
	reg := "127.0.0.1:" + strconv.Itoa(freePort(t))
	start(t, "registry", "oci/registry", "-addr", reg, "-cert", cert, "-key", key)
	listening(t, "the registry", reg)

	root := framework.Root()
	version := strings.TrimSpace(readFile(t, "VERSION"))
	annotations := struct {
		Annotations map[string]string `json:"annotations"`
	}{}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join("bundle", "metadata", "annotations.yaml"))), &annotations); err != nil {
		t.Fatal(err)
	}
	bundleRef := push(t, caDir, filepath.Join(root, "bundle"), reg+"/ai-stack-operator-bundle:v"+version, "/", annotations.Annotations)
	// The committed catalog names the bundle image as published; here it is
	// the copy on the loopback registry, by digest.
	catalog := withBundleImages(t, filepath.Join(root, olmgen.CatalogDir), func(string) string { return bundleRef })
	// The ClusterCatalog names its image by tag, as the committed one does
	// (catalogd polls a tag; a digest admits no pollIntervalMinutes).
	catalogRef := reg + "/ai-stack-operator-catalog:v" + version
	catalogDigest := push(t, caDir, catalog, catalogRef, "/configs",
		map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"})
	t.Logf("pushed %s and %s", bundleRef, catalogDigest)

	// Outside a pod each names the ServiceAccount it acts as (hack/tools/olmv1/outside-pod).
	t.Setenv("OLMV1_SERVICE_ACCOUNT", olmv1NS+"/catalogd-controller-manager")
	served := "127.0.0.1:" + strconv.Itoa(freePort(t))
	start(t, "catalogd", "olmv1/catalogd", "--system-namespace", olmv1NS, "--catalogs-server-addr", served, "--external-address", served,
		"--cache-dir", filepath.Join(dir, "catalogd-cache"), "--tls-cert", cert, "--tls-key", key, "--pull-cas-dir", caDir,
		"--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(freePort(t)), "--health-probe-bind-address", "127.0.0.1:"+strconv.Itoa(freePort(t)),
		"--webhook-server-port", strconv.Itoa(freePort(t)))
	t.Setenv("OLMV1_SERVICE_ACCOUNT", olmv1NS+"/operator-controller-controller-manager")
	start(t, "operator-controller", "olmv1/operator-controller", "--system-namespace", olmv1NS, "--catalogd-cas-dir", caDir, "--pull-cas-dir", caDir,
		"--cache-path", filepath.Join(dir, "operator-controller-cache"), "--health-probe-bind-address", "127.0.0.1:"+strconv.Itoa(freePort(t)))

	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "gitops", "operator-olmv1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "ClusterCatalog" {
			if err := unstructured.SetNestedField(u.Object, catalogRef, "spec", "source", "image", "ref"); err != nil {
				t.Fatal(err)
			}
		}
		if err := olmc.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Logf("applied %s/%s", u.GetKind(), u.GetName())
	}

	// config/argocd's checks for OLM v1's kinds, on the live objects.
	loaded, err := argocd.Load(filepath.Join(root, "config", "argocd"))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]argocd.Check{}
	for _, c := range loaded {
		checks[c.Key()] = c
	}
	health := map[string]argocd.Health{}
	start0 := time.Now()
	condition := func(kind, name, typ string) func() error {
		seen := ""
		return func() error {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("olm.operatorframework.io/v1")
			u.SetKind(kind)
			if err := olmc.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			var now []string
			ok := false
			for _, c := range conds {
				m := c.(map[string]any)
				now = append(now, fmt.Sprintf("%s=%s(%s)", m["type"], m["status"], m["reason"]))
				if m["type"] == typ && m["status"] == "True" {
					ok = true
				}
			}
			if s := strings.Join(now, " "); s != seen {
				seen = s
				for _, c := range conds {
					if m := c.(map[string]any); m["type"] == "Progressing" && m["status"] == "True" && m["reason"] != "Succeeded" {
						s += fmt.Sprintf(" (Progressing: %.160s)", m["message"])
					}
				}
				h, err := argocd.Evaluate(checks["olm.operatorframework.io_"+kind].Script, u.Object, false)
				if err != nil {
					t.Errorf("Argo CD health of %s: %v", kind, err)
				}
				health[kind] = h
				t.Logf("[%6.1fs] %s/%s %s; Argo CD: %s", time.Since(start0).Seconds(), kind, name, s, h.Status)
			}
			if !ok {
				msg := fmt.Sprint(conds)
				return fmt.Errorf("not %s: %s", typ, msg)
			}
			return nil
		}
	}
	env.Eventually(t, "the ClusterCatalog serving", condition("ClusterCatalog", "ai-stack-operator-catalog", "Serving"))
	env.Eventually(t, "the ClusterExtension installed", condition("ClusterExtension", olmgen.Package, "Installed"))
	for _, kind := range []string{"ClusterCatalog", "ClusterExtension"} {
		if health[kind].Status != "Healthy" {
			t.Errorf("Argo CD health of the %s: %+v, want Healthy", kind, health[kind])
		}
	}
	ce := &unstructured.Unstructured{}
	ce.SetAPIVersion("olm.operatorframework.io/v1")
	ce.SetKind("ClusterExtension")
	if err := olmc.Get(ctx, client.ObjectKey{Name: olmgen.Package}, ce); err != nil {
		t.Fatal(err)
	}
	installed, _, _ := unstructured.NestedStringMap(ce.Object, "status", "install", "bundle")
	if installed["name"] != olmgen.Package+".v"+version || installed["version"] != version {
		t.Errorf("installed bundle %v, want %s.v%s", installed, olmgen.Package, version)
	}
	owned := olmv1Installed(t, ctx)
	t.Logf("installed %s; objects labelled as the ClusterExtension's: %v", installed["name"], owned)

	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join("bundle", "manifests", olmgen.Package+".clusterserviceversion.yaml"))), csv); err != nil {
		t.Fatal(err)
	}
	spec := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0]
	env.Eventually(t, "the operator's Deployment available", func() error {
		d := &appsv1.Deployment{}
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: spec.Name}, d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas < 1 {
			return fmt.Errorf("%d available", d.Status.AvailableReplicas)
		}
		return nil
	})
	runOperator := operatorRunner(t)
	stop := runOperator(csv)
	work := newCRs(t, ctx, "olmv1-workloads")
	t.Logf("LlamaStackDistribution, TrustyAIService and OGXServer Ready, LMEvalJob Complete, under the RBAC OLM v1 rendered from the CSV")
	before := work.workloads(t, ctx)

	// Upgrade: the catalog with a v0.2.0 release (its bundle pushed too)
	// under a new tag, and the ClusterCatalog pointed at it, as a change in
	// Git would; the ClusterExtension names no version, so OLM v1 follows
	// the channel's upgrade edge.
	catalog2, bundle2 := catalogWithRelease(t, catalog, upgraded)
	bundle2Ref := push(t, caDir, bundle2, reg+"/ai-stack-operator-bundle:v"+upgraded, "/", annotations.Annotations)
	second := olmgen.Package + ".v" + upgraded
	catalog2 = withBundleImages(t, catalog2, func(name string) string {
		if name == second {
			return bundle2Ref
		}
		return bundleRef
	})
	catalog2Ref := reg + "/ai-stack-operator-catalog:v" + upgraded
	push(t, caDir, catalog2, catalog2Ref, "/configs", map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"})
	stop()
	cc := &unstructured.Unstructured{}
	cc.SetAPIVersion("olm.operatorframework.io/v1")
	cc.SetKind("ClusterCatalog")
	if err := olmc.Get(ctx, client.ObjectKey{Name: "ai-stack-operator-catalog"}, cc); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cc.Object, catalog2Ref, "spec", "source", "image", "ref"); err != nil {
		t.Fatal(err)
	}
	if err := olmc.Update(ctx, cc); err != nil {
		t.Fatal(err)
	}
	start0 = time.Now()
	upgradedTo := condition("ClusterExtension", olmgen.Package, "Installed")
	env.Eventually(t, "the ClusterExtension upgraded to "+second, func() error {
		if err := upgradedTo(); err != nil {
			return err
		}
		if err := olmc.Get(ctx, client.ObjectKey{Name: olmgen.Package}, ce); err != nil {
			return err
		}
		b, _, _ := unstructured.NestedStringMap(ce.Object, "status", "install", "bundle")
		if b["name"] != second || b["version"] != upgraded {
			return fmt.Errorf("installed %v", b)
		}
		return nil
	})
	t.Logf("[%6.1fs] the ClusterExtension installed %s", time.Since(start0).Seconds(), second)
	if h, err := argocd.Evaluate(checks["olm.operatorframework.io_ClusterExtension"].Script, ce.Object, false); err != nil || h.Status != "Healthy" {
		t.Errorf("Argo CD health of the upgraded ClusterExtension: %+v (%v)", h, err)
	}
	csv2 := &operatorsv1alpha1.ClusterServiceVersion{}
	raw, err := os.ReadFile(filepath.Join(bundle2, "manifests", olmgen.Package+".clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, csv2); err != nil {
		t.Fatal(err)
	}
	wantImage := csv2.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image
	env.Eventually(t, "the operator's Deployment on "+wantImage, func() error {
		d := &appsv1.Deployment{}
		if err := olmc.Get(ctx, client.ObjectKey{Namespace: opNS, Name: spec.Name}, d); err != nil {
			return err
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != wantImage {
			return fmt.Errorf("image %s", got)
		}
		return nil
	})
	// The new version's pod replaces the old one's: the operator restarts,
	// and the CRs' workloads stay as they were.
	stop = runOperator(csv2)
	work.untouchedSince(t, ctx, before)
	stop()

	if err := olmc.Delete(ctx, ce); err != nil {
		t.Fatal(err)
	}
	// operator-controller uninstalls the release: the Deployment, its
	// ServiceAccount and RBAC go, and so do the CRDs, which takes every CR
	// of the three kinds with them. The CRs' finalizers are the operator's,
	// which is gone too, so the CRDs stay Terminating until someone removes
	// them (docs/gitops.md warns of it).
	env.Eventually(t, "everything the ClusterExtension installed gone or being deleted", func() error {
		if left := olmv1Installed(t, ctx); len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	var terminating []string
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := olmc.Get(ctx, client.ObjectKey{Name: d.Name}, crd); err == nil {
			terminating = append(terminating, d.Name)
		}
	}
	l := &llamav1alpha1.LlamaStackDistribution{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(work.llsd), l); err != nil || l.DeletionTimestamp == nil {
		t.Errorf("the LlamaStackDistribution after the ClusterExtension's deletion: %v, deleting: %v; want it deleted with its CRD", err, l.DeletionTimestamp)
	}
	t.Logf("after the ClusterExtension's deletion: CRDs Terminating: %v; the LlamaStackDistribution deleting, finalizers %v", terminating, l.Finalizers)
}

// olmv1Installed lists what operator-controller installed for the
// ClusterExtension (the objects it labels with its owner's name) and is not
// being deleted, as kind/[namespace/]name.
func olmv1Installed(t *testing.T, ctx context.Context) []string {
	t.Helper()
	sel := client.MatchingLabels{"olm.operatorframework.io/owner-kind": "ClusterExtension", "olm.operatorframework.io/owner-name": olmgen.Package}
	var out []string
	for kind, l := range map[string]client.ObjectList{
		"CustomResourceDefinition": &apiextensionsv1.CustomResourceDefinitionList{},
		"ClusterRole":              &rbacv1.ClusterRoleList{}, "ClusterRoleBinding": &rbacv1.ClusterRoleBindingList{},
		"Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{},
		"ServiceAccount": &corev1.ServiceAccountList{}, "Service": &corev1.ServiceList{}, "Deployment": &appsv1.DeploymentList{},
	} {
		if err := olmc.List(ctx, l, sel); err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			if m := o.(client.Object); m.GetDeletionTimestamp() == nil {
				out = append(out, kind+"/"+strings.TrimPrefix(m.GetNamespace()+"/"+m.GetName(), "/"))
			}
		}
	}
	slices.Sort(out)
	return out
}
