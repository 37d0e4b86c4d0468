#!/usr/bin/env bash
# make test-e2e / make test-cluster: the local cluster of internal/localcluster
# (controllers, scheduler, simulated nodes), booted once; with
# CLUSTER_GO_TESTS=1 the Go tests of test/cluster run on it first (their
# operators in-process), then the kuttl suites of test/e2e (kuttl starts the
# operator's binary in the background). The cluster is stopped however they end.
#   hack/e2e.sh [kuttl flags, e.g. --test storage]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=$(hack/tools.sh assets)
export KUBEBUILDER_ASSETS=$assets PATH="$assets:$PATH"
dir=bin/e2e-cluster
rm -rf "$dir" && mkdir -p "$dir"
# shellcheck source=hack/localcluster.sh
. hack/localcluster.sh
stop() { kill -TERM "${LOCAL_CLUSTER_PID:-}" 2>/dev/null || true; wait "${LOCAL_CLUSTER_PID:-}" 2>/dev/null || true; }
trap stop EXIT
start=$SECONDS
start_local_cluster "$dir"
echo "e2e: local cluster up in $((SECONDS - start)) s"
if [ "${CLUSTER_GO_TESTS:-}" = 1 ]; then
  start=$SECONDS
  LOCAL_CLUSTER_KUBECONFIG=$KUBECONFIG go test ${GOTESTFLAGS:-} -count=1 -timeout 20m ./test/cluster/...
  # What the Go tests left (CRs whose operator is gone hold their
  # finalizers) would be reconciled by kuttl's operator: let it go. Every
  # kind the operator serves has its CRD in config/crd/bases, named
  # <group>_<plural>.yaml (controller-gen's names).
  for crd in config/crd/bases/*.yaml; do
    crd=$(basename "$crd" .yaml)
    kind=${crd#*_}.${crd%%_*}
    kubectl get "$kind" -A -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{"\n"}{end}' |
      while read -r ns name; do
        kubectl -n "$ns" patch "$kind" "$name" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null || true
        kubectl -n "$ns" delete "$kind" "$name" --wait=false >/dev/null 2>&1 || true
      done
  done
  echo "e2e: Go tests on the local cluster took $((SECONDS - start)) s"
fi
start=$SECONDS
# TEST_TIMEOUT_SCALE (docs/testing.md) scales kuttl's step timeout too.
kuttl_timeout=()
if [ -n "${TEST_TIMEOUT_SCALE:-}" ]; then
  kuttl_timeout=(--timeout "$(awk -v s="$TEST_TIMEOUT_SCALE" 'BEGIN { printf "%d", 60 * s }')")
fi
bin/kubectl-kuttl test --config test/e2e/kuttl-test.yaml "${kuttl_timeout[@]}" "$@"
echo "e2e: kuttl took $((SECONDS - start)) s"
