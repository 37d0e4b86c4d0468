// Package llamastack is the LlamaStackDistribution kind (llamastack.io/
// v1alpha1) on the release.Kind contract. Gather reads the operator's
// settings and upstream llama-stack-k8s-operator's ConfigMap, the platform,
// the CA sources, userConfig's ConfigMap and the claimed storage; Values
// turns the CR into the values of charts/llama-stack-distribution; Status
// reads the rendered objects back and what the running server says of
// itself. runconfig/ renders the typed run configuration (spec.server.config,
// docs/runconfig.md) into run.yaml; distributions/ is the embedded table of
// distribution names and their images, which the settings may override.
package llamastack
