#!/usr/bin/env bash
# make demo: a local control plane (built on first use), the CRDs, the operator
# and the samples. Prints what was created and each CR's status, then waits for
# Ctrl-C. DEMO_EXIT=1 exits after printing (for scripts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=$(hack/tools.sh assets)
export KUBEBUILDER_ASSETS=$assets PATH="$assets:$PATH"
demo=.demo
rm -rf "$demo" && mkdir -p "$demo"
export KUBECONFIG=$root/$demo/kubeconfig

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

echo "== starting a local control plane (kube-apiserver $("$assets/kube-apiserver" --version | cut -d' ' -f2), etcd)"
go build -o bin/controlplane ./hack/controlplane
bin/controlplane -out "$KUBECONFIG" >"$demo/controlplane.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
  [[ -s "$KUBECONFIG" ]] && kubectl get --raw /readyz >/dev/null 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$demo/controlplane.log"; exit 1; }
  sleep 1
done
kubectl get crd -o custom-columns=CRD:.metadata.name --no-headers | sed 's/^/installed CRD /'

echo "== starting the operator (logs: $demo/manager.log)"
bin/manager run --metrics-bind-address 0 --health-probe-bind-address 0 >"$demo/manager.log" 2>&1 &
pids+=($!)

echo "== applying config/samples"
kubectl create namespace demo >/dev/null
kubectl apply -n demo -k config/samples
for cr in $(kubectl get llsd -n demo -o name); do
  kubectl wait -n demo "$cr" --for=jsonpath='{.status.phase}'=Initializing --timeout=60s >/dev/null \
    || { echo "the operator did not reconcile $cr; its log:"; tail -50 "$demo/manager.log"; exit 1; }
done

echo
echo "== what the operator created (namespace demo)"
kubectl get deployments,services,serviceaccounts,persistentvolumeclaims,configmaps,networkpolicies,poddisruptionbudgets,horizontalpodautoscalers,ingresses -n demo -l ai-stack-operator.io/managed=true
echo
echo "== the Helm releases (Secrets, label owner=helm)"
kubectl get secrets -n demo -l owner=helm -L name,status,version
echo
echo "== status"
kubectl get llsd -n demo
echo
kubectl get llsd -n demo -o custom-columns='NAME:.metadata.name,RECONCILED:.status.conditions[?(@.type=="Reconciled")].reason,DEPLOYMENT:.status.conditions[?(@.type=="DeploymentReady")].reason,STORAGE:.status.conditions[?(@.type=="StorageReady")].reason,TRUST:.status.conditions[?(@.type=="TrustReady")].reason,SERVICE URL:.status.serviceURL'
echo
echo "--- llamastackdistribution/llama-starter, in full"
kubectl get -n demo llsd llama-starter -o yaml | sed -n '/^status:/,$p'
echo
echo "Note: a local control plane has no kubelet, so the Deployment gets no pods and the phase stays Initializing."
echo "Try: KUBECONFIG=$KUBECONFIG kubectl -n demo edit llsd llama-starter"

if [[ "${DEMO_EXIT:-0}" == "1" ]]; then
  exit 0
fi
echo
echo "Running; press Ctrl-C to stop."
wait "${pids[1]}"
