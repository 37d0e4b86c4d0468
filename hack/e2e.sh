#!/usr/bin/env bash
# make test-e2e: the local cluster of internal/localcluster (controllers, scheduler,
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
# shellcheck source=hack/localcluster.sh
. hack/localcluster.sh
stop() { kill -TERM "${LOCAL_CLUSTER_PID:-}" 2>/dev/null || true; wait "${LOCAL_CLUSTER_PID:-}" 2>/dev/null || true; }
trap stop EXIT
start_local_cluster "$dir"
bin/kubectl-kuttl test --config test/e2e/kuttl-test.yaml "$@"
