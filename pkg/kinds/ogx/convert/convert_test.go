package convert

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	llamav1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
	ogxv1beta1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/ogx/v1beta1"
)

// Every field of the old kind that has a counterpart lands in it; the
// others are noted by field.
func TestConvertEveryField(t *testing.T) {
	old := &llamav1alpha1.LlamaStackDistribution{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
metadata:
  name: old
  namespace: team-a
  labels: {team: a}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}", note: kept}
spec:
  replicas: 2
  network:
    exposeRoute: true
    allowedFrom:
      namespaces: [clients, "*"]
      labels: [access, "team=b"]
  server:
    distribution: {name: remote-vllm}
    workers: 3
    containerSpec:
      name: custom
      port: 9000
      resources: {requests: {cpu: "2"}}
      env: [{name: VLLM_URL, value: "http://vllm"}, {name: LLAMA_STACK_LOG, value: debug}]
      command: [serve]
      args: [--x]
    podOverrides:
      serviceAccountName: runner
      volumes: [{name: v, emptyDir: {}}]
      volumeMounts: [{name: v, mountPath: /v}]
    podDisruptionBudget: {minAvailable: 1}
    topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
    autoscaling: {minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70}
    storage: {size: 3Gi}
    userConfig: {configMapName: run}
    tlsConfig:
      caBundle: {configMapName: cas, configMapKeys: [a.crt, b.crt]}
      publicRoots: false
`), old))
	got, notes := Convert(old, Options{})
	want := &ogxv1beta1.OGXServer{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
apiVersion: ogx.io/v1beta1
kind: OGXServer
metadata:
  name: old-ogx
  namespace: team-a
  labels: {team: a}
  annotations: {note: kept, ogx.io/adopt-storage: old, ogx.io/adopt-networking: old}
spec:
  distribution: {name: remote-vllm}
  overrideConfig: {name: run, key: config.yaml}
  tls: {trust: {caCertificates: [{name: cas, key: a.crt}, {name: cas, key: b.crt}]}}
  network:
    port: 9000
    externalAccess: {enabled: true}
    policy:
      ingress:
        - from:
            - namespaceSelector: {}
            - namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [clients]}]}
            - namespaceSelector: {matchExpressions: [{key: access, operator: Exists}]}
            - namespaceSelector: {matchLabels: {team: b}}
          ports: [{protocol: TCP, port: 9000}]
  workload:
    replicas: 2
    workers: 3
    resources: {requests: {cpu: "2"}}
    overrides:
      serviceAccountName: runner
      env: [{name: VLLM_URL, value: "http://vllm"}, {name: LLAMA_STACK_LOG, value: debug}]
      command: [serve]
      args: [--x]
      volumes: [{name: v, emptyDir: {}}]
      volumeMounts: [{name: v, mountPath: /v}]
    podDisruptionBudget: {minAvailable: 1}
    topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
    autoscaling: {minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70}
    storage: {size: 3Gi, mountPath: /.llama}
`), want))
	assert.Equal(t, want, got)
	fields := map[string]bool{}
	for _, n := range notes {
		fields[n.Field] = true
		assert.NotEmpty(t, n.Message)
	}
	assert.Equal(t, map[string]bool{
		"spec.server.containerSpec.name": true, "spec.server.containerSpec.env[1]": true,
		"spec.server.storage.mountPath": true, "spec.server.tlsConfig.publicRoots": true,
	}, fields)

	plain, _ := Convert(old, Options{Suffix: "-2", NoAdopt: true})
	assert.Equal(t, "old-2", plain.Name)
	assert.NotContains(t, plain.Annotations, ogxv1beta1.AdoptStorageAnnotation)
}
