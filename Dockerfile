# Builds the manager. Not built in this repository's CI (no container engine);
# `make build` compiles the same binary.
FROM golang:1.26 AS builder
ARG VERSION=v0.1.0-dev
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY charts/ charts/
COPY cmd/ cmd/
COPY config/crd/ config/crd/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/ai-stack-operator/ai-stack-operator/pkg/version.Version=${VERSION}" \
    -o manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /manager
COPY watches.yaml /watches.yaml
USER 65532:65532
ENTRYPOINT ["/manager"]
CMD ["run"]
