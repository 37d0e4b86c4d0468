# Builds the manager image: `make docker-build IMG=<registry>/ai-stack-operator:<tag>`
# (or `make docker-buildx` for linux/amd64 and linux/arm64). make passes
# VERSION=v$(cat VERSION); built without it, the binary takes the VERSION file.
# Not built in this repository's CI (no container engine); `make build`
# compiles the same binary, and cmd/manager's TestDockerfile checks this file.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG VERSION
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /workspace
COPY go.mod go.sum VERSION ./
RUN go mod download
COPY charts/ charts/
COPY cmd/ cmd/
COPY config/crd/ config/crd/
COPY pkg/ pkg/
# Cross-compiled on the build machine's platform for the target's (buildx).
RUN v="${VERSION:-v$(cat VERSION)}" && \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-s -w -X github.com/ai-stack-operator/ai-stack-operator/pkg/version.Version=$v" \
    -o manager ./cmd/manager && \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-s -w -X github.com/ai-stack-operator/ai-stack-operator/pkg/version.Version=$v" \
    -o render ./cmd/render && \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-s -w" -o driver ./cmd/lmes-driver

FROM gcr.io/distroless/static:nonroot
ARG VERSION
# The labels OperatorHub and Red Hat's container certification read, and the
# OCI ones registries show.
LABEL name="ai-stack-operator" \
      vendor="ai-stack-operator" \
      version="${VERSION}" \
      release="1" \
      summary="Runs Llama Stack distributions, OGX servers and TrustyAI services on Kubernetes and OpenShift" \
      description="An operator for LlamaStackDistribution (llamastack.io/v1alpha1), OGXServer (ogx.io/v1beta1) and TrustyAIService (trustyai.opendatahub.io/v1) with the upstream operators' APIs: typed and generated server configuration, merged CA bundles, restarts by content hash." \
      maintainer="ai-stack-operator maintainers" \
      io.k8s.display-name="AI Stack Operator" \
      io.k8s.description="Runs Llama Stack distributions, OGX servers and TrustyAI services on Kubernetes and OpenShift" \
      io.openshift.tags="ai,llama-stack,trustyai,operator" \
      org.opencontainers.image.title="ai-stack-operator" \
      org.opencontainers.image.description="Runs Llama Stack distributions, OGX servers and TrustyAI services on Kubernetes and OpenShift" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/ai-stack-operator/ai-stack-operator"
WORKDIR /
COPY --from=builder /workspace/manager /manager
# The offline preview: docker run --rm -i --entrypoint /render IMG -f - < cr.yaml
COPY --from=builder /workspace/render /render
# The LMEvalJob driver: a job pod's init container copies it
# (/bin/driver --copy ...), so this image is the default lmes-driver-image.
COPY --from=builder /workspace/driver /bin/driver
USER 65532:65532
ENTRYPOINT ["/manager"]
CMD ["run"]
