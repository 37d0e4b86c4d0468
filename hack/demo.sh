#!/usr/bin/env bash
# make demo: the local cluster (built on first use: API server, controllers,
# scheduler, simulated nodes), the CRDs, the operator and the samples. Shows
# every sample reaching phase Ready with its pods (the LMEvalJob Complete),
# then edits a ConfigMap a sample reads and shows the new ReplicaSet
# replacing the pods. Waits for
# Ctrl-C; DEMO_EXIT=1 exits after the rollout (for scripts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=$(hack/tools.sh assets)
export KUBEBUILDER_ASSETS=$assets PATH="$assets:$PATH"
demo=.demo
rm -rf "$demo" && mkdir -p "$demo"

pids=()
cleanup() {
  trap - EXIT INT TERM
  echo
  echo "== stopping"
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; wait "${pids[i]}" 2>/dev/null || true; done
  echo "stopped; logs were in $demo/"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting the local cluster (logs: $demo/cluster.log, $demo/cluster/): kube-apiserver $("$assets/kube-apiserver" --version | cut -d' ' -f2), etcd, controller-manager, scheduler, 3 simulated nodes (kwok)"
# shellcheck source=hack/localcluster.sh
. hack/localcluster.sh
start_local_cluster "$demo/cluster"
pids+=("$LOCAL_CLUSTER_PID")
kubectl get nodes -L topology.kubernetes.io/zone
kubectl get crd -o custom-columns=CRD:.metadata.name --no-headers | sed 's/^/installed CRD /'

echo "== starting the operator in namespace ai-stack-operator-system (logs: $demo/manager.log)"
kubectl create namespace ai-stack-operator-system >/dev/null
bin/manager run --operator-namespace ai-stack-operator-system --metrics-bind-address 0 --health-probe-bind-address 0 >"$demo/manager.log" 2>&1 &
pids+=($!)

echo "== applying config/samples"
kubectl create namespace demo >/dev/null
# The NemoGuardrails sample's configuration (config/samples).
kubectl create configmap -n demo nemo-config --from-literal=config.yaml='models: []' >/dev/null
# The EvalHub sample's provider and collection: definitions in the operator's
# namespace, found by their labels (docs/trustyai.md).
kubectl create configmap -n ai-stack-operator-system evalhub-provider-lm-evaluation-harness --from-literal=lm_evaluation_harness.yaml='id: lm_evaluation_harness' >/dev/null
kubectl label configmap -n ai-stack-operator-system evalhub-provider-lm-evaluation-harness trustyai.opendatahub.io/evalhub-provider-type=system trustyai.opendatahub.io/evalhub-provider-name=lm-evaluation-harness >/dev/null
kubectl create configmap -n ai-stack-operator-system evalhub-collection-leaderboard-v2 --from-literal=leaderboard-v2.yaml='id: leaderboard-v2' >/dev/null
kubectl label configmap -n ai-stack-operator-system evalhub-collection-leaderboard-v2 trustyai.opendatahub.io/evalhub-collection-type=system trustyai.opendatahub.io/evalhub-collection-name=leaderboard-v2 >/dev/null
kubectl apply -n demo -k config/samples
# Reconciled once: status.observedGeneration, or (OGXServer, whose status
# is upstream's and has none) its Reconciled condition's.
for cr in $(kubectl get llsd,ogxserver,trustyaiservice,nemoguardrails,evalhub -n demo -o name); do
  path='{.status.observedGeneration}'
  [[ $cr == ogxserver* ]] && path='{.status.conditions[?(@.type=="Reconciled")].observedGeneration}'
  kubectl wait -n demo "$cr" --for=jsonpath="$path"=1 --timeout=60s >/dev/null \
    || { echo "the operator did not reconcile $cr; its log:"; tail -50 "$demo/manager.log"; exit 1; }
done

echo
echo "== the samples that ask for storage wait for a volume (no provisioner here):"
kubectl get llsd,ogxserver -n demo -o custom-columns='NAME:.metadata.name,PHASE:.status.phase,STORAGE:.status.conditions[?(@.type=="StorageReady")].message'
kubectl get trustyaiservice -n demo -o custom-columns='NAME:.metadata.name,PHASE:.status.phase,STORAGE:.status.conditions[?(@.type=="PVCAvailable")].message'
echo "== creating a static PersistentVolume for each claim; the PV controller binds them"
for pvc in $(kubectl get pvc -n demo -o jsonpath='{.items[*].metadata.name}'); do
  size=$(kubectl get pvc "$pvc" -n demo -o jsonpath='{.spec.resources.requests.storage}')
  class=$(kubectl get pvc "$pvc" -n demo -o jsonpath='{.spec.storageClassName}')
  kubectl apply -f - >/dev/null <<PV
apiVersion: v1
kind: PersistentVolume
metadata:
  name: demo-$pvc
spec:
  capacity:
    storage: $size
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: "$class"
  hostPath:
    path: /tmp/demo-$pvc
  claimRef:
    namespace: demo
    name: $pvc
PV
  echo "PersistentVolume demo-$pvc ($size) for claim $pvc"
done

for cr in $(kubectl get llsd,ogxserver,trustyaiservice,nemoguardrails,evalhub -n demo -o name); do
  kubectl wait -n demo "$cr" --for=jsonpath='{.status.phase}'=Ready --timeout=90s >/dev/null \
    || { echo "$cr is not Ready:"; kubectl get -n demo "$cr" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'; exit 1; }
done

echo
echo "== what the operator created (namespace demo)"
kubectl get deployments,services,serviceaccounts,persistentvolumeclaims,configmaps,networkpolicies,poddisruptionbudgets,horizontalpodautoscalers,ingresses -n demo -l ai-stack-operator.io/managed=true
kubectl get clusterrolebindings -l trustyai.opendatahub.io/owner-namespace=demo
echo
echo "== the Helm release records (ConfigMaps in the operator's namespace; the operator has no Secret permission)"
kubectl get configmaps -n ai-stack-operator-system -l owner=helm -L ai-stack-operator.io/owner-namespace,status,version
echo
echo "== pods (simulated: scheduled on kwok nodes, Running and Ready; no container runs)"
kubectl get pods -n demo -o wide
echo
echo "== status"
kubectl get llsd -n demo
echo
kubectl get llsd -n demo -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason,DEPLOYMENT:.status.conditions[?(@.type=="DeploymentReady")].message,STORAGE:.status.conditions[?(@.type=="StorageReady")].reason,TRUST:.status.conditions[?(@.type=="TrustReady")].reason,SERVICE URL:.status.serviceURL'
echo
kubectl get ogxserver -n demo
kubectl get ogxserver -n demo -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason,CONFIG:.status.conditions[?(@.type=="ConfigGenerated")].message,SERVICE URL:.status.serviceURL'
echo
kubectl get trustyaiservice -n demo
kubectl get trustyaiservice -n demo -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason,PVC:.status.conditions[?(@.type=="PVCAvailable")].reason,TLS:.status.conditions[?(@.type=="TLSAvailable")].message'
echo
kubectl get nemoguardrails -n demo
kubectl get nemoguardrails -n demo -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason,DEPLOYMENT:.status.conditions[?(@.type=="DeploymentReady")].message,TRUST:.status.conditions[?(@.type=="TrustReady")].reason'
echo
kubectl get evalhub -n demo
kubectl get evalhub -n demo -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason,URL:.status.url,PROVIDERS:.status.activeProviders,COLLECTIONS:.status.activeCollections,MCP:.status.mcp.phase'

echo
echo "== the LMEvalJob sample (simulated: kwok ends its pod after a second; no evaluation runs here)"
kubectl wait -n demo lmevaljob/evaljob-sample --for=jsonpath='{.status.state}'=Complete --timeout=60s >/dev/null \
  || { echo "the LMEvalJob did not complete:"; kubectl get -n demo lmevaljob/evaljob-sample -o jsonpath='{.status}{"\n"}'; exit 1; }
kubectl get lmevaljob -n demo -o custom-columns='NAME:.metadata.name,STATE:.status.state,REASON:.status.reason,MESSAGE:.status.message,POD:.status.podName,VALID:.status.conditions[?(@.type=="Valid")].status'

echo
echo "== a content change of ConfigMap llama-run-config (read by llama-user-config) rolls its pods"
rs_names() { kubectl get rs -n demo -l app.kubernetes.io/instance=llama-user-config -o custom-columns='REPLICASET:.metadata.name,DESIRED:.spec.replicas,READY:.status.readyReplicas,HASH:.spec.template.metadata.annotations.configmap\.hash/user-config' ; }
rs_names
kubectl patch configmap llama-run-config -n demo --type=merge -p '{"data":{"config.yaml":"version: 2\nimage_name: starter\napis: [inference, safety]\n"}}' >/dev/null
echo "-- patched config.yaml; waiting for the rollout"
for _ in $(seq 1 60); do
  n=$(kubectl get rs -n demo -l app.kubernetes.io/instance=llama-user-config -o name | wc -l)
  [[ "$n" -ge 2 ]] && break
  sleep 0.5
done
kubectl rollout status deployment/llama-user-config -n demo --timeout=60s
rs_names
kubectl wait -n demo llsd/llama-user-config --for=jsonpath='{.status.phase}'=Ready --timeout=60s >/dev/null
echo "-- a label-only edit rolls nothing:"
kubectl label configmap llama-run-config -n demo demo=labelled >/dev/null
sleep 2
rs_names
echo
echo "Try: KUBECONFIG=$KUBECONFIG kubectl -n demo edit llsd llama-starter"

if [[ "${DEMO_EXIT:-0}" == "1" ]]; then
  exit 0
fi
echo
echo "Running; press Ctrl-C to stop."
wait "${pids[1]}"
