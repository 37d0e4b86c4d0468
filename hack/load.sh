#!/usr/bin/env bash
# make test-load: the control-plane test packages under load, to find the
# tests that depend on how busy the machine is (docs/testing.md, "Under
# load"). A CPU-bound process per core runs beside `go test -count=N` of each
# package, one package at a time; every failed test is listed at the end
# with its first failure line, and the exit status is non-zero if any failed.
#   LOAD_COUNT=5 (runs of each package)  LOAD_PACKAGES="./test/kueue/..."
#   LOAD_HOGS=<cores> (CPU-bound processes; 0 for none)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
count=${LOAD_COUNT:-5}
hogs=${LOAD_HOGS:-$(nproc)}
packages=${LOAD_PACKAGES:-./test/integration/... ./test/kueue/... ./test/faults/... ./test/cluster/...}
assets=$(hack/tools.sh assets)
export KUBEBUILDER_ASSETS=$assets OPERATOR_BINARY=${OPERATOR_BINARY:-$root/bin/manager}
log=bin/test-load.log
: >"$log"

pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; }
trap stop EXIT
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=($!)
done
echo "load: $hogs CPU-bound processes beside $count runs of each of: $packages"

rc=0
for pkg in $packages; do
  start=$SECONDS
  # One process per run, as CI runs each package: a suite's control plane
  # lives as long as its process (envtest finishes no namespace deletion,
  # so a second run in one process would meet the first's namespaces).
  for i in $(seq "$count"); do
    echo "=== load: $pkg run $i" >>"$log"
    go test -count=1 -timeout 1h "$pkg" >>"$log" 2>&1 || rc=1
  done
  echo "load: $pkg x$count took $((SECONDS - start)) s"
done

echo "load: failed tests (of $log):"
if grep -E '^\s*--- FAIL' "$log" | sed -E 's/ \([0-9.]+s\)$//' | sort | uniq -c; then
  # The first line each failure printed, for the list of causes.
  grep -E -A2 '^\s*--- FAIL' "$log" | grep -vE '^\s*--- FAIL|^--$' | sed 's/^\s*//' | sort | uniq -c | sort -rn | head -40
else
  echo "  none"
fi
exit $rc
