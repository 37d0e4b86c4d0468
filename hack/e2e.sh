#!/usr/bin/env bash
# make test-e2e: the local cluster of test/localcluster (controllers, scheduler,
# simulated nodes), then the kuttl suites of test/e2e against it (kuttl starts
# the operator in the background); the cluster is stopped however kuttl ends.
#   hack/e2e.sh [kuttl flags, e.g. --test storage]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=$(hack/tools.sh assets)
export KUBEBUILDER_ASSETS=$assets PATH="$assets:$PATH"
dir=bin/e2e-cluster
rm -rf "$dir" && mkdir -p "$dir"
go build -o bin/controlplane ./hack/controlplane
bin/controlplane -dir "$dir" >"$dir/controlplane.log" 2>&1 &
cp=$!
stop() { kill -TERM "$cp" 2>/dev/null || true; wait "$cp" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq 1 120); do
  grep -q "local cluster ready" "$dir/controlplane.log" 2>/dev/null && break
  kill -0 "$cp" 2>/dev/null || { cat "$dir/controlplane.log"; exit 1; }
  sleep 0.5
done
grep -q "local cluster ready" "$dir/controlplane.log" || { echo "the local cluster did not start:"; cat "$dir/controlplane.log"; exit 1; }
export KUBECONFIG=$root/$dir/kubeconfig
bin/kubectl-kuttl test --config test/e2e/kuttl-test.yaml "$@"
