#!/usr/bin/env bash
# Builds the local control plane and the code generators from the pinned tools
# modules under hack/tools/, into bin/ (git-ignored). Each binary is cached by
# the hash of its tools module (go.mod + go.sum), its package and its flags, so
# a second run is a no-op; a copy is kept in the machine's cache
# ($AI_STACK_TOOLS_CACHE, default ~/.cache/ai-stack-operator/tools), which a
# fresh clone on the same machine takes instead of building again.
#
#   hack/tools.sh            build everything that is missing
#   hack/tools.sh assets     print the KUBEBUILDER_ASSETS folder
#   hack/tools.sh cluster    build the local cluster only (etcd, kube-apiserver,
#                            kubectl, controllers, scheduler, kwok): make demo
#   hack/tools.sh controller-gen   build controller-gen only (the code
#                            generators need nothing else)
#   hack/tools.sh helm       build Helm 4's CLI into bin/helm (the upgrade
#                            test lists the operator's releases with it)
#   hack/tools.sh golangci-lint   build golangci-lint into bin/ (make lint)
#   hack/tools.sh opm        build operator-registry's catalog tools only
#   hack/tools.sh olm        build OLM v0 (olm-operator, catalog-operator,
#                            package-server, opm) into bin/olm with its CRDs
#   hack/tools.sh olmv1      build OLM v1 (catalogd, operator-controller) into
#                            bin/olmv1 with its CRDs, and bin/oci's registry and push
#   hack/tools.sh kueue      copy Kueue's CRDs (kueue v0.17.0's source) into bin/kueue/crds
#   hack/tools.sh kueue-manager   and build Kueue's controller manager, bin/kueue/kueue
#   hack/tools.sh oldest     build the oldest Kubernetes the operator supports
#                            (kube-apiserver and etcd) into bin/k8s/$oldest_version,
#                            for make test-integration-oldest
#   hack/tools.sh oldest-assets   print that folder
#
# Nothing is downloaded from anywhere but the Go module proxy.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
k8s_version=v1.37.2
assets="$bin/k8s/$k8s_version"
# The oldest Kubernetes the operator supports (the CSV's minKubeVersion, the
# charts' kubeVersion, README): the envtest integration suite runs against
# its kube-apiserver (make test-integration-oldest).
oldest_version=v1.30.14
oldest="$bin/k8s/$oldest_version"

cache="${AI_STACK_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ai-stack-operator/tools}"

# stamp MODULE_DIR PACKAGE LDFLAGS: what a binary is built from.
# The tools module's own Go files count too (the opm tools are written here).
stamp() { { cat "$root/hack/tools/$1/go.mod" "$root/hack/tools/$1/go.sum"; find "$root/hack/tools/$1" -name '*.go' | sort | xargs -r cat; echo "$2 $3"; } | sha256sum | cut -c1-16; }

# build MODULE_DIR OUTPUT PACKAGE [LDFLAGS [TAGS]]
# $BUILD_PREPARE, when set, names a function run only when a build is needed.
# make test runs two of these scripts at once (test-unit beside
# test-integration), so every file is written to a temporary name and moved.
build() {
  local mod=$1 out=$2 pkg=$3 ldflags=${4:-} tags=${5:-}
  local want have cached
  want=$(stamp "$mod" "$pkg" "$ldflags $tags")
  have=$(cat "$out.stamp" 2>/dev/null || true)
  if [[ -x "$out" && "$want" == "$have" ]]; then
    return 0
  fi
  cached="$cache/$want/$(basename "$out")"
  mkdir -p "$(dirname "$out")"
  if [[ -x "$cached" ]] && cp "$cached" "$out.tmp.$$"; then
    mv "$out.tmp.$$" "$out"
    echo "$want" > "$out.stamp.$$" && mv "$out.stamp.$$" "$out.stamp"
    return 0
  fi
  echo "tools: building $(basename "$out") from hack/tools/$mod (first run on this machine takes minutes)" >&2
  local start=$SECONDS
  mkdir -p "$(dirname "$out")"
  if [[ -n "${BUILD_PREPARE:-}" ]]; then "$BUILD_PREPARE"; fi
  (cd "$root/hack/tools/$mod" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$out.tmp.$$" "$pkg")
  mv "$out.tmp.$$" "$out"
  echo "$want" > "$out.stamp.$$" && mv "$out.stamp.$$" "$out.stamp"
  # The machine's copy; a cache that cannot be written is no error.
  mkdir -p "$cache/$want" 2>/dev/null && cp "$out" "$cache/$want/.$(basename "$out").tmp" 2>/dev/null &&
    mv "$cache/$want/.$(basename "$out").tmp" "$cached" 2>/dev/null || true
  echo "tools: built $(basename "$out") in $((SECONDS - start))s" >&2
}

# operator-registry's catalog tools: validation (`opm validate`), the
# rendering of a bundle directory (`opm render --migrate-level=all`), and the
# registry's own cache (`opm serve`) queried as OLM queries it.
opm_tools() {
  build opm-validate "$bin/opm-validate" .
  build opm-validate "$bin/opm-render" ./render "" containers_image_openpgp
  build opm-validate "$bin/opm-query" ./query
}

# OLM v0 from operator-lifecycle-manager v0.38.0 (hack/tools/olm): the
# olm-operator, the catalog-operator, the package server and opm (which
# serves the catalog), and OLM's CRDs from the same module, for the real-OLM
# test (test/olm) and make olm-demo.
olm_tools() {
  local tags=containers_image_openpgp
  build olm "$bin/olm/olm" github.com/operator-framework/operator-lifecycle-manager/cmd/olm "" $tags
  build olm "$bin/olm/catalog" github.com/operator-framework/operator-lifecycle-manager/cmd/catalog "" $tags
  # Its own command with delegated auth off (package-server/main.go says why).
  build olm "$bin/olm/package-server" ./package-server "" $tags
  build olm "$bin/olm/opm" github.com/operator-framework/operator-registry/cmd/opm "" $tags
  local dir
  dir=$(cd "$root/hack/tools/olm" && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)
  copy_dir "$bin/olm/crds" "$dir"/deploy/chart/crds/*.yaml
}

# Kueue v0.17.0 (hack/tools/kueue). Its CRDs, copied from the module's
# source (nothing built), for test/kueue, which make test runs: LMEvalJobs
# through Kueue's real Workload schema. Its controller manager (cmd/kueue,
# 345 s to build on 2 cores the first time), only for make test-kueue.
kueue_crds() {
  local dir
  # Nothing is built from it, so nothing else downloads it: a fresh module
  # cache has the module's Dir empty until it is downloaded.
  (cd "$root/hack/tools/kueue" && go mod download sigs.k8s.io/kueue)
  dir=$(cd "$root/hack/tools/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
  [ -n "$dir" ] || { echo "tools: Kueue's module sigs.k8s.io/kueue has no source directory" >&2; exit 1; }
  copy_dir "$bin/kueue/crds" "$dir"/config/components/crd/bases/kueue.x-k8s.io_*.yaml
}

# copy_dir DEST FILE...: DEST holds exactly FILE..., replaced in one move.
# make test runs two of these scripts at once: the replacement is done under
# a lock (the folder DEST.lock; one left by a killed run is taken after a
# minute), and a DEST already holding the files is left alone.
copy_dir() {
  local dest=$1 tmp n=0
  shift
  if same_dir "$dest" "$@"; then return 0; fi
  mkdir -p "$(dirname "$dest")"
  until mkdir "$dest.lock" 2>/dev/null; do
    if [[ -n "$(find "$dest.lock" -maxdepth 0 -mmin +1 2>/dev/null)" ]]; then rmdir "$dest.lock" 2>/dev/null || true; fi
    n=$((n + 1)); if ((n > 1200)); then echo "tools: $dest.lock held for two minutes" >&2; return 1; fi
    sleep 0.1
  done
  if ! same_dir "$dest" "$@"; then
    tmp=$(mktemp -d "$dest.XXXXXX")
    cp "$@" "$tmp/" && chmod 0755 "$tmp"
    rm -rf "$dest.old.$$"
    if [[ -d "$dest" ]]; then mv -T "$dest" "$dest.old.$$"; fi
    mv -T "$tmp" "$dest" && rm -rf "$dest.old.$$"
  fi
  rmdir "$dest.lock"
}

# same_dir DEST FILE...: DEST holds exactly FILE... (by name and content).
same_dir() {
  local dest=$1 f
  shift
  [[ -d "$dest" ]] || return 1
  [[ $(find "$dest" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) -eq $# ]] || return 1
  for f in "$@"; do cmp -s "$f" "$dest/$(basename "$f")" || return 1; done
}

# OLM v1 from operator-controller v1.5.1 (hack/tools/olmv1: catalogd and
# operator-controller, and their standard CRDs) and the OCI tools of
# hack/tools/oci (a loopback registry from distribution v3, and push, which
# makes an image of a directory with go-containerregistry), for the OLM v1
# test (test/olm).
olmv1_tools() {
  local tags=containers_image_openpgp
  BUILD_PREPARE=olmv1_source GOFLAGS="-modfile=$bin/olmv1/build.mod" \
    build olmv1 "$bin/olmv1/catalogd" github.com/operator-framework/operator-controller/cmd/catalogd "" $tags
  BUILD_PREPARE=olmv1_source GOFLAGS="-modfile=$bin/olmv1/build.mod" \
    build olmv1 "$bin/olmv1/operator-controller" github.com/operator-framework/operator-controller/cmd/operator-controller "" $tags
  build oci "$bin/oci/registry" ./registry
  build oci "$bin/oci/push" ./push
  local dir
  dir=$(cd "$root/hack/tools/olmv1" && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)
  copy_dir "$bin/olmv1/crds" "$dir"/config/base/catalogd/crd/standard/olm.*.yaml "$dir"/config/base/operator-controller/crd/standard/olm.*.yaml
}

# olmv1_source: catalogd and operator-controller read their ServiceAccount
# from the pod's token file at a fixed path; outside a pod they take it from
# OLMV1_SERVICE_ACCOUNT. Go refuses overlays of the module cache, so they are
# built from a copy of the module in bin/olmv1/src with that one file replaced
# by hack/tools/olmv1/outside-pod (-modfile bin/olmv1/build.mod: the tools
# module's go.mod plus a replace). Nothing of it is committed.
olmv1_source() {
  local dir src="$bin/olmv1/src" own="$root/hack/tools/olmv1/outside-pod/serviceaccount.go" tmp
  local file=internal/shared/util/sa/serviceaccount.go
  dir=$(cd "$root/hack/tools/olmv1" && GOFLAGS= go mod download github.com/operator-framework/operator-controller &&
    GOFLAGS= go list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)
  mkdir -p "$bin/olmv1"
  if [[ "$(cat "$src/.from" 2>/dev/null)" != "$dir" ]] || ! cmp -s "$own" "$src/$file"; then
    tmp=$(mktemp -d "$src.XXXXXX")
    cp -r "$dir/." "$tmp/" && chmod -R u+w "$tmp" && cp "$own" "$tmp/$file" && echo "$dir" > "$tmp/.from"
    rm -rf "$src.old.$$"
    if [[ -d "$src" ]]; then mv "$src" "$src.old.$$"; fi
    mv "$tmp" "$src" && rm -rf "$src.old.$$"
  fi
  { cat "$root/hack/tools/olmv1/go.mod"; printf '\nreplace github.com/operator-framework/operator-controller => %s\n' "$src"; } > "$bin/olmv1/build.mod.$$"
  cp "$root/hack/tools/olmv1/go.sum" "$bin/olmv1/build.sum.$$"
  mv "$bin/olmv1/build.mod.$$" "$bin/olmv1/build.mod" && mv "$bin/olmv1/build.sum.$$" "$bin/olmv1/build.sum"
}

# oldest_tools: kube-apiserver of the oldest supported Kubernetes
# (hack/tools/kube-apiserver-oldest, 6 minutes on 2 cores the first time)
# beside the same etcd as the current control plane's.
oldest_tools() {
  local minor=${oldest_version#v1.}
  minor=${minor%%.*}
  build etcd "$oldest/etcd" go.etcd.io/etcd/server/v3
  build kube-apiserver-oldest "$oldest/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
    "-X k8s.io/component-base/version.gitVersion=$oldest_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
}

# The local cluster (hack/localcluster, envtest, make demo): etcd,
# kube-apiserver, kubectl, the controllers, the scheduler and simulated nodes.
cluster_tools() {
  local k8s_minor=${k8s_version#v1.}
  k8s_minor=${k8s_minor%%.*}
  local k8s_ldflags="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor -X k8s.io/component-base/version.gitTreeState=clean"
  build etcd "$assets/etcd" go.etcd.io/etcd/server/v3
  build kube-apiserver "$assets/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
  build kube-apiserver "$assets/kubectl" k8s.io/kubernetes/cmd/kubectl "$k8s_ldflags"
  build kube-apiserver "$assets/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags"
  build kube-apiserver "$assets/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler "$k8s_ldflags"
  build kwok "$assets/kwok" sigs.k8s.io/kwok/cmd/kwok
}

case "${1:-all}" in
  assets) echo "$assets"; exit 0 ;;
  oldest-assets) echo "$oldest"; exit 0 ;;
  oldest) oldest_tools; exit 0 ;;
  cluster) cluster_tools; exit 0 ;;
  controller-gen) build controller-gen "$bin/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen; exit 0 ;;
  helm) build helm "$bin/helm" helm.sh/helm/v4/cmd/helm; exit 0 ;;
  golangci-lint) build golangci-lint "$bin/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint; exit 0 ;;
  opm) opm_tools; exit 0 ;;
  olm) olm_tools; exit 0 ;;
  olmv1) olmv1_tools; exit 0 ;;
  kueue) kueue_crds; exit 0 ;;
  kueue-manager) kueue_crds; build kueue "$bin/kueue/kueue" sigs.k8s.io/kueue/cmd/kueue; exit 0 ;;
  all) ;;
  *) echo "usage: $0 [all|assets|cluster|controller-gen|helm|golangci-lint|opm|olm|olmv1|kueue|kueue-manager|oldest|oldest-assets]" >&2; exit 2 ;;
esac

cluster_tools
build kuttl "$bin/kubectl-kuttl" github.com/kudobuilder/kuttl/cmd/kubectl-kuttl
build controller-gen "$bin/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen
build helm "$bin/helm" helm.sh/helm/v4/cmd/helm
opm_tools
olm_tools
olmv1_tools
kueue_crds
