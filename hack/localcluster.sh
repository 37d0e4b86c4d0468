# Sourced by hack/demo.sh and hack/e2e.sh: start the local cluster of
# internal/localcluster (hack/controlplane) in the background.
#   start_local_cluster DIR    sets LOCAL_CLUSTER_PID and KUBECONFIG; exits the script if it does not start
start_local_cluster() {
  local dir=$1
  go build -o bin/controlplane ./hack/controlplane
  bin/controlplane -dir "$dir" >"$dir.log" 2>&1 &
  LOCAL_CLUSTER_PID=$!
  for _ in $(seq 1 240); do
    grep -q "local cluster ready" "$dir.log" 2>/dev/null && break
    kill -0 "$LOCAL_CLUSTER_PID" 2>/dev/null || break
    sleep 0.5
  done
  grep -q "local cluster ready" "$dir.log" || { echo "the local cluster did not start:"; cat "$dir.log"; kill -TERM "$LOCAL_CLUSTER_PID" 2>/dev/null; exit 1; }
  export KUBECONFIG=$PWD/$dir/kubeconfig
}
