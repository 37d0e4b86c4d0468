# ai-stack-operator. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

# The release's semantic version (the VERSION file); images are tagged v$(VERSION).
VERSION ?= $(shell cat VERSION)
IMG ?= quay.io/ai-stack-operator/ai-stack-operator:v$(VERSION)
BUNDLE_IMG ?= quay.io/ai-stack-operator/ai-stack-operator-bundle:v$(VERSION)
LDFLAGS := -X github.com/ai-stack-operator/ai-stack-operator/pkg/version.Version=v$(VERSION)
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
KUTTL := $(BIN)/kubectl-kuttl
ASSETS = $(shell hack/tools.sh assets)
# Go test flags, e.g. make test GOTESTFLAGS=-v
GOTESTFLAGS ?=
# The operator's namespace for make run (release records, settings).
OPERATOR_NAMESPACE ?= ai-stack-operator-system
# kuttl flags for test-e2e, e.g. make test-e2e E2EFLAGS="--test storage"
E2EFLAGS ?=

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ The two commands

.PHONY: demo
demo: cluster-tools build manifests ## The local cluster, the CRDs, the operator and the samples: every sample Ready with pods, then a ConfigMap edit rolls them; Ctrl-C stops (DEMO_EXIT=1 exits). Builds only the local cluster and controller-gen, not the test tools.
	hack/demo.sh

.PHONY: test
test: tools manifests generate vet build ## Run every test: unit, golden render and fuzz beside envtest integration and the fault tests (shortened; one control plane at a time), then one local cluster for the Go cluster tests and the kuttl e2e suites (each stage's time printed).
	@t=$$SECONDS; log=$(BIN)/test-unit-fuzz.log; ru=0; ri=0; \
	( $(MAKE) --no-print-directory test-unit test-fuzz MANAGER_BUILT=1 >$$log 2>&1 ) & pid=$$!; \
	$(MAKE) --no-print-directory test-integration MANAGER_BUILT=1 || ri=$$?; \
	wait $$pid || ru=$$?; cat $$log; \
	echo "make test: test-unit and test-fuzz (exit $$ru) beside test-integration (exit $$ri) took $$((SECONDS - t)) s"; \
	if [ $$ru != 0 ] || [ $$ri != 0 ]; then exit 1; fi; t=$$SECONDS; \
	$(MAKE) --no-print-directory test-cluster MANAGER_BUILT=1; echo "make test: test-cluster took $$((SECONDS - t)) s"

##@ Development

.PHONY: tools
tools: ## Build the local cluster (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok, kubectl), kuttl, controller-gen, operator-registry's catalog tools, OLM v0 (bin/olm), OLM v1 (bin/olmv1) and the loopback registry tools (bin/oci) into bin/ (cached).
	hack/tools.sh

.PHONY: cluster-tools
cluster-tools: ## Build the local cluster alone into bin/ (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok, kubectl; cached): what make demo runs.
	hack/tools.sh cluster

.PHONY: controller-gen
controller-gen: ## Build controller-gen alone into bin/ (cached; what manifests, generate, bundle, install, run and deploy need).
	hack/tools.sh controller-gen

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs (config/crd/bases) and RBAC from the API types and markers.
	$(CONTROLLER_GEN) crd paths="./pkg/apis/..." output:crd:dir=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths="{./pkg/operator/...,./pkg/kinds/...}" output:rbac:dir=config/rbac

.PHONY: generate
generate: controller-gen ## Generate deepcopy code.
	$(CONTROLLER_GEN) object paths=./pkg/apis/...

.PHONY: verify
verify: manifests generate lint ## Fail when generated files or formatting drift from what is committed, a tracked file holds a conflict marker or stray whitespace, or the linter finds anything (make lint).
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- config pkg/apis || { echo "generated files drift: run 'make manifests generate' and commit"; exit 1; }
	@go run ./hack/bundle -version $(VERSION) -image $(IMG) -check || { echo "bundle/ or catalog/ is stale: run 'make bundle' and commit"; exit 1; }
	@git diff --check $$(git hash-object -t tree /dev/null) -- . || { echo "conflict markers or stray whitespace in tracked files (above): fix them"; exit 1; }
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 5242880 {print $$2}'); test -z "$$big" || { echo "tracked files over 5 MiB (build output? add them to .gitignore and git rm --cached them):"; echo "$$big"; exit 1; }

.PHONY: lint
lint: ## Run golangci-lint (v2.15.0, built into bin/ from hack/tools/golangci-lint; .golangci.yml says which linters); make verify runs it.
	hack/tools.sh golangci-lint
	$(BIN)/golangci-lint run ./...

.PHONY: fmt
fmt: ## Run gofmt.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: build
build: ## Build the manager binary into bin/manager (as the image builds it).
ifndef MANAGER_BUILT
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(BIN)/manager ./cmd/manager
endif

.PHONY: render
render: ## Print what the operator would apply for the samples, offline (RENDER_FLAGS=--openshift).
	go run ./cmd/render -f config/samples/llamastack_v1alpha1_llamastackdistribution.yaml $(RENDER_FLAGS)

.PHONY: test-unit
test-unit: opm-tools ## Unit and golden render tests (no control plane; the catalog test runs bin/opm-validate, the one tool it builds).
	go test $(GOTESTFLAGS) -timeout 30m $$(go list ./... | grep -v -e /test/ -e /internal/localcluster)

# How much test-fuzz mutates each fuzz target: unset, a count of inputs per
# target (a count has no wall-clock deadline, which Go's fuzzing coordinator
# can miss on a busy machine and report as a failure: golang/go#75804);
# make test-fuzz FUZZTIME=30m for a long run.
FUZZTIME ?=

.PHONY: test-fuzz
test-fuzz: ## Fuzz CR -> render, the run.yaml emitter, the settings parsers and the CA merge (a fixed count of inputs each, or FUZZTIME; their seeds also run in test-unit).
	go test ./cmd/render -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(or $(FUZZTIME),100x)
	go test ./pkg/kinds/llamastack/runconfig -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(or $(FUZZTIME),20000x)
	go test ./pkg/settings -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),20000x)
	go test ./pkg/trust -run '^$$' -fuzz '^FuzzMerge$$' -fuzztime $(or $(FUZZTIME),2000x)

.PHONY: test-integration
test-integration: tools build ## Envtest integration (the real manager against a real kube-apiserver and etcd), the local cluster's own test, the fault tests shortened (kills, outages, leader change, soak), LMEvalJob through Kueue (test/kueue, Kueue's CRDs) and real OLM v0 (install/upgrade/uninstall) and v1 (install/upgrade/uninstall) (test/olm): one control plane at a time (-p 1), the operator's binary built once (bin/manager).
	OPERATOR_BINARY=$(BIN)/manager KUBEBUILDER_ASSETS=$(ASSETS) go test $(GOTESTFLAGS) -p 1 -parallel 8 -timeout 30m -count=1 ./test/integration/... ./internal/localcluster/... ./test/faults/... ./test/olm/... ./test/kueue/...

.PHONY: test-integration-oldest
test-integration-oldest: build ## The envtest integration suite (test/integration) against the oldest Kubernetes the operator supports (kube-apiserver v1.30.14, built into bin/k8s by hack/tools.sh oldest: 6 minutes on 2 cores the first time).
	hack/tools.sh oldest
	OPERATOR_BINARY=$(BIN)/manager KUBEBUILDER_ASSETS=$$(hack/tools.sh oldest-assets) go test $(GOTESTFLAGS) -p 1 -parallel 8 -timeout 30m -count=1 ./test/integration/...

.PHONY: test-kueue
test-kueue: tools build ## test/kueue under Kueue's own controller manager (v0.17.0, built into bin/kueue by hack/tools.sh kueue-manager: 345 s on 2 cores the first time, its modules downloaded): admission, quota, placement, deactivation, Finished. Writes Kueue's fixed metrics certificate folder, /etc/kueue/metrics/certs, when empty.
	hack/tools.sh kueue-manager
	KUEUE_BINARY=$(BIN)/kueue/kueue KUBEBUILDER_ASSETS=$(ASSETS) go test $(GOTESTFLAGS) -tags realkueue -count=1 -v ./test/kueue/...

.PHONY: test-olm
test-olm: tools build ## OLM for real on a local cluster. v0 (olm-operator, catalog-operator, package server, opm serve of catalog/): config/gitops/operator installs the operator, a CR of each kind Ready under OLM's RBAC, upgrade to a v0.2.0 built on the fly under Manual approval, uninstall. v1 (catalogd, operator-controller, images on a loopback registry): config/gitops/operator-olmv1 installs it, each kind Ready, upgrade to v0.2.0, uninstall.
	OPERATOR_BINARY=$(BIN)/manager KUBEBUILDER_ASSETS=$(ASSETS) go test $(GOTESTFLAGS) -count=1 -timeout 15m ./test/olm/...

.PHONY: olm-demo
olm-demo: tools build ## test-olm verbosely: the transcript of the Subscription, InstallPlans and CSVs (objects and phases, seconds from the start), the PackageManifest, the RBAC OLM granted; then the ClusterCatalog and ClusterExtension conditions with their Argo CD health and what OLM v1 installed (about a minute).
	OPERATOR_BINARY=$(BIN)/manager KUBEBUILDER_ASSETS=$(ASSETS) go test -v -count=1 -timeout 15m ./test/olm/...

.PHONY: test-cluster
test-cluster: tools build ## One local cluster (controllers, scheduler, simulated nodes) for the Go tests on it (GC, rollouts, RBAC, metrics, one leader, the OLM rehearsal), then the kuttl suites on the same cluster.
	OPERATOR_BINARY=$(BIN)/manager CLUSTER_GO_TESTS=1 GOTESTFLAGS="$(GOTESTFLAGS)" hack/e2e.sh $(E2EFLAGS)

.PHONY: test-faults
test-faults: tools build ## The fault tests in full (about 50 minutes): more CRs and kill rounds, 30 s outages, a graceful API server restart, the shipped lease timing and pending-release grace, a 30-minute soak of 300 CRs. FAULTS_SEED=n replays a run.
	OPERATOR_BINARY=$(BIN)/manager FAULTS=full KUBEBUILDER_ASSETS=$(ASSETS) go test -timeout 3h -count=1 -v ./test/faults/...

.PHONY: test-load
test-load: tools build ## The control-plane packages under load, to find tests that depend on how busy the machine is: a CPU-bound process per core beside LOAD_COUNT (5) runs of test/integration, test/kueue, test/faults and test/cluster, one package at a time; lists every failed test with its first failure line (bin/test-load.log). Run it before resolving an issue that touches a controller (docs/testing.md). About 70 minutes with LOAD_COUNT=5; LOAD_PACKAGES=./test/kueue/... for one package.
	hack/load.sh

.PHONY: test-e2e
test-e2e: tools build ## kuttl suites alone under test/e2e on the local cluster (controllers, scheduler, simulated nodes; manager in the background). E2EFLAGS="--test storage" runs one.
	hack/e2e.sh $(E2EFLAGS)

.PHONY: bench
bench: tools build ## Benchmarks on the local cluster (bare API server unless BENCHFLAGS=-workloads): memory, ConfigMap->rollout latency, idle writes and reads, throughput against the write floor, writes per CR, phase split, scaling to 1,000 CRs (about 7 minutes; BENCHFLAGS="-idle=30s -scale=0" for a quick run, -kind=OGXServer, TrustyAIService, NemoGuardrails or EvalHub for the other kinds, -kind=LMEvalJob for jobs to Complete, -cpuprofile/-trace/-apiserver-cpuprofile/-heapprofile FILE, -peer BINARY for another operator's rows beside these: docs/performance.md).
	KUBEBUILDER_ASSETS=$(ASSETS) go run ./test/bench -manager $(BIN)/manager $(BENCHFLAGS)

.PHONY: bundle
bundle: manifests opm-tools ## Regenerate the OLM bundle (bundle/, bundle.Dockerfile) and the catalog (catalog/: package and channel of config/catalog/releases.yaml, the bundle rendered by operator-registry) for VERSION (the VERSION file; make bundle VERSION=x.y.z writes it).
	@test "$$(cat VERSION)" = "$(VERSION)" || echo "$(VERSION)" > VERSION
	sed -i -E 's|^(    newTag: ).*|\1v$(VERSION)|' config/manager/kustomization.yaml
	go run ./hack/bundle -version $(VERSION) -image $(IMG)
	$(BIN)/opm-render -image $(BUNDLE_IMG) bundle > catalog/ai-stack-operator/bundle-v$(VERSION).yaml

.PHONY: opm-tools
opm-tools: ## Build operator-registry's catalog tools alone into bin/ (opm-validate, opm-render, opm-query; cached).
	hack/tools.sh opm

.PHONY: catalog
catalog: bundle ## Regenerate the file-based catalog (catalog/, catalog.Dockerfile; channel stable, each bundle's image BUNDLE_IMG and objects) with the bundle.

.PHONY: argocd
argocd: ## Regenerate config/argocd's argocd-cm and OpenShift GitOps patches from the health.lua files (a unit test fails when they are stale).
	go test ./pkg/argocd/ -run TestSnippetsUpToDate -update

.PHONY: update-golden
update-golden: ## Rewrite the golden render files from the current charts.
	go test ./cmd/render/ -run Golden -update

##@ Images (need a container engine; not run in CI)

CONTAINER_TOOL ?= docker

.PHONY: docker-build
docker-build: ## Build the manager image IMG (CONTAINER_TOOL=podman for podman).
	$(CONTAINER_TOOL) build --build-arg VERSION=v$(VERSION) -t $(IMG) .

# The platforms docker-buildx builds the manager image for.
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: docker-buildx
docker-buildx: ## Build and push the manager image IMG for PLATFORMS (linux/amd64,linux/arm64) with docker buildx (cross-compiled, no emulation).
	- $(CONTAINER_TOOL) buildx create --name ai-stack-operator-builder
	$(CONTAINER_TOOL) buildx use ai-stack-operator-builder
	$(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) --build-arg VERSION=v$(VERSION) -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: bundle-build
bundle-build: bundle ## Build the OLM bundle image BUNDLE_IMG from bundle/.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the OLM bundle image BUNDLE_IMG, which the catalog names (OLM v1 pulls it, OLM v0 unpacks it).
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

CATALOG_IMG ?= quay.io/ai-stack-operator/ai-stack-operator-catalog:v$(VERSION)

.PHONY: catalog-build
catalog-build: catalog ## Build the catalog image CATALOG_IMG (opm serving catalog/: each bundle's image and objects).
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG.
	$(CONTAINER_TOOL) push $(CATALOG_IMG)

##@ Cluster

.PHONY: install
install: manifests ## Install the CRDs into the cluster of KUBECONFIG.
	kubectl apply --server-side -f config/crd/bases

.PHONY: uninstall
uninstall: ## Remove the CRDs from the cluster of KUBECONFIG.
	kubectl delete --ignore-not-found -f config/crd/bases

.PHONY: run
run: install ## Run the operator locally against the cluster of KUBECONFIG (OPERATOR_NAMESPACE, created if missing, holds its release records and settings).
	kubectl get namespace $(OPERATOR_NAMESPACE) >/dev/null 2>&1 || kubectl create namespace $(OPERATOR_NAMESPACE)
	go run -ldflags "$(LDFLAGS)" ./cmd/manager run --operator-namespace $(OPERATOR_NAMESPACE) --metrics-bind-address 0 --health-probe-bind-address :8081

.PHONY: deploy
deploy: manifests ## Deploy the operator to the cluster of KUBECONFIG (image IMG): config/default with IMG, as build-installer writes it.
	go run ./hack/installer -image $(IMG) | kubectl apply --server-side -f -

.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml (CRDs, RBAC, admission policies, Deployment with image IMG) for installing without OLM: kubectl apply --server-side -f dist/install.yaml.
	go run ./hack/installer -image $(IMG) -o dist/install.yaml

.PHONY: undeploy
undeploy: ## Remove the operator from the cluster of KUBECONFIG.
	kubectl delete --ignore-not-found -k config/default
