package llamastack

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/platform"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/trust/trusttest"
)

const (
	opNS         = "ops"
	settingsName = "ai-stack-operator-config"
)

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, llamav1alpha1.AddToScheme(s))
	return s
}

func newCR(mut func(*llamav1alpha1.LlamaStackDistribution)) *llamav1alpha1.LlamaStackDistribution {
	cr := &llamav1alpha1.LlamaStackDistribution{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "demo", UID: "uid-demo"}}
	cr.Spec.Server.Distribution.Name = "starter"
	if mut != nil {
		mut(cr)
	}
	return cr
}

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// ours is the bundle ConfigMap as the operator writes it for the CR.
func ours(cr *llamav1alpha1.LlamaStackDistribution, pem string) *corev1.ConfigMap {
	c := cm(cr.Namespace, bundleName(cr.Name), map[string]string{trust.BundleKey: pem})
	c.Labels = map[string]string{release.LabelManaged: "true"}
	c.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cr, llamav1alpha1.GroupVersion.WithKind(llamav1alpha1.Kind))}
	return c
}

func kindOn(t *testing.T, caps release.Capabilities, funcs *interceptor.Funcs, objs ...client.Object) *Kind {
	b := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	c := b.Build()
	return &Kind{Deps: release.Deps{
		OperatorNamespace: opNS, SettingsConfigMap: settingsName,
		Client: c, APIReader: c, Recorder: record.NewFakeRecorder(10),
		Capabilities: func() (release.Capabilities, error) { return caps, nil },
		Environ:      func() []string { return nil },
	}}
}

// Gather reads the settings, the CA sources, the run configuration and the
// claim, and turns what the user fixes into failures, not errors.
func TestGather(t *testing.T) {
	plain := release.NewCapabilities()
	openshift := release.NewCapabilities(platform.SCC, platform.Route)
	caA, caB := trusttest.NewCA(t, "a"), trusttest.NewCA(t, "b")
	withBundle := func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{CABundle: &llamav1alpha1.CABundleConfig{ConfigMapName: "cas"}}
	}
	withUserConfig := func(cr *llamav1alpha1.LlamaStackDistribution) {
		cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run"}
	}
	for _, tc := range []struct {
		name    string
		cr      *llamav1alpha1.LlamaStackDistribution
		caps    release.Capabilities
		objs    func(cr *llamav1alpha1.LlamaStackDistribution) []client.Object
		failure string // the reason of a *status.Failure Gather returns
		check   func(t *testing.T, in *Inputs)
	}{{
		name: "settings override images and switch the NetworkPolicy off",
		cr:   newCR(nil), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm(opNS, settingsName, map[string]string{KeyImageOverrides: "starter: mirror/starter:1", KeyNetworkPolicy: "disabled", KeyProgressDeadlineSeconds: "30"})}
		},
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, "mirror/starter:1", in.values.Distributions["starter"])
			assert.True(t, in.values.NetworkPolicyDisabled)
			assert.Equal(t, int32(30), in.values.ProgressDeadlineSeconds)
			assert.Equal(t, opNS, in.values.OperatorNamespace)
			assert.False(t, in.trust.Wanted, "no CA source applies")
			assert.Empty(t, in.values.Trust.ConfigMapName)
		},
	}, {
		name: "invalid settings", cr: newCR(nil), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm(opNS, settingsName, map[string]string{KeyNetworkPolicy: "off"})}
		},
		failure: status.ReasonInvalidOperatorSettings,
	}, {
		name: "explicit bundle merged and mounted", cr: newCR(withBundle), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", "cas", map[string]string{trust.BundleKey: caA})}
		},
		check: func(t *testing.T, in *Inputs) {
			require.NotNil(t, in.trust.Bundle)
			assert.Equal(t, []string{"ConfigMap team-a/cas", "public roots"}, in.trust.Sources)
			assert.Equal(t, bundleName("demo"), in.values.Trust.ConfigMapName)
			assert.Equal(t, in.trust.MountHash(), in.values.Trust.Hash)
			assert.Nil(t, in.stored)
		},
	}, {
		name: "missing explicit source keeps the last good bundle", cr: newCR(withBundle), caps: plain,
		objs: func(cr *llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{ours(cr, caB)}
		},
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, trust.ReasonConfigMapNotFound, in.trust.Reason)
			assert.Contains(t, in.trust.Message, "spec.server.tlsConfig.caBundle: ConfigMap team-a/cas does not exist")
			assert.Equal(t, trust.ContentHash(map[string]string{trust.BundleKey: caB}, nil), in.values.Trust.Hash, "the last good bundle stays mounted")
			require.NotNil(t, in.stored)
		},
	}, {
		name: "another namespace is refused unless allowed", caps: plain,
		cr: newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
			withBundle(cr)
			cr.Spec.Server.TLSConfig.CABundle.ConfigMapNamespace = "shared"
		}),
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("shared", "cas", map[string]string{trust.BundleKey: caA})}
		},
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, trust.ReasonCrossNamespaceRefused, in.trust.Reason)
			assert.Contains(t, in.trust.Message, KeyCrossNamespaceCABundles)
			assert.Empty(t, in.values.Trust.ConfigMapName, "nothing to mount")
		},
	}, {
		name: "Open Data Hub's bundle, every key", cr: newCR(nil), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", trust.ODHBundle, map[string]string{"ca-bundle.crt": caA, "odh-ca-bundle.crt": caB})}
		},
		check: func(t *testing.T, in *Inputs) {
			require.NotNil(t, in.trust.Bundle)
			assert.Equal(t, 2+len(trust.PublicRoots()), in.trust.Bundle.Certificates)
		},
	}, {
		name: "a ConfigMap of the bundle's name that is not ours", cr: newCR(nil), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", trust.ODHBundle, map[string]string{"ca-bundle.crt": caA}), cm("team-a", bundleName("demo"), nil)}
		},
		failure: status.ReasonNameConflict,
	}, {
		name: "OpenShift's injected ConfigMaps, empty until injected", cr: newCR(nil), caps: openshift,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", serviceCAName("demo"), map[string]string{"service-ca.crt": caA})}
		},
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, trustSources{ServiceCA: true, ClusterTrustedCA: true, PublicRoots: true}, in.values.TrustSources)
			assert.Equal(t, []string{"ConfigMap team-a/demo-service-ca", "ConfigMap team-a/demo-trusted-ca", "public roots"}, in.trust.Sources)
			assert.True(t, in.values.Platform.OpenShift)
			assert.True(t, in.values.Platform.Route)
		},
	}, {
		name: "OpenShift injections switched off", caps: openshift,
		cr: newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
			cr.Spec.Server.TLSConfig = &llamav1alpha1.TLSConfig{ServiceCA: ptr.To(false), ClusterTrustedCA: ptr.To(false)}
		}),
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, trustSources{PublicRoots: true}, in.values.TrustSources)
			assert.False(t, in.trust.Wanted)
		},
	}, {
		name: "userConfig is hashed by content", cr: newCR(withUserConfig), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", "run", map[string]string{"config.yaml": "version: 2"})}
		},
		check: func(t *testing.T, in *Inputs) {
			assert.Equal(t, trust.ContentHash(map[string]string{"config.yaml": "version: 2"}, nil), in.values.UserConfigHash)
		},
	}, {
		name: "userConfig missing", cr: newCR(withUserConfig), caps: plain,
		failure: "UserConfigNotFound",
	}, {
		name: "userConfig without config.yaml", cr: newCR(withUserConfig), caps: plain,
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			return []client.Object{cm("team-a", "run", map[string]string{"run.yaml": "x"})}
		},
		failure: "UserConfigInvalid",
	}, {
		name: "the claim's size is known", caps: plain,
		cr: newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
			cr.Spec.Server.Storage = &llamav1alpha1.StorageSpec{}
		}),
		objs: func(*llamav1alpha1.LlamaStackDistribution) []client.Object {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: claimName("demo")}}
			pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}
			return []client.Object{pvc}
		},
		check: func(t *testing.T, in *Inputs) {
			require.NotNil(t, in.values.ClaimedStorage)
			assert.Equal(t, "20Gi", in.values.ClaimedStorage.String())
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []client.Object
			if tc.objs != nil {
				objs = tc.objs(tc.cr)
			}
			in, err := kindOn(t, tc.caps, nil, objs...).Gather(context.Background(), tc.cr)
			if tc.failure != "" {
				var f *status.Failure
				require.True(t, errors.As(err, &f), "want a failure %s, got %v", tc.failure, err)
				assert.Equal(t, tc.failure, f.Reason)
				return
			}
			require.NoError(t, err)
			tc.check(t, in)
		})
	}
}

// API errors are returned to be retried, never reported as the user's.
func TestGatherReturnsAPIErrors(t *testing.T) {
	broken := errors.New("connection refused")
	for _, name := range []string{settingsName, trust.ODHBundle, bundleName("demo"), "run"} {
		t.Run(name, func(t *testing.T) {
			k := kindOn(t, release.NewCapabilities(), &interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if key.Name == name {
					return broken
				}
				return c.Get(ctx, key, obj, opts...)
			}})
			_, err := k.Gather(context.Background(), newCR(func(cr *llamav1alpha1.LlamaStackDistribution) {
				cr.Spec.Server.UserConfig = &llamav1alpha1.UserConfigSpec{ConfigMapName: "run"}
			}))
			require.ErrorIs(t, err, broken)
			var f *status.Failure
			assert.False(t, errors.As(err, &f))
		})
	}
	k := kindOn(t, release.NewCapabilities(), nil)
	k.Capabilities = func() (release.Capabilities, error) { return release.Capabilities{}, broken }
	_, err := k.Gather(context.Background(), newCR(nil))
	assert.ErrorIs(t, err, broken, "no capabilities yet: nothing is decided")
}
