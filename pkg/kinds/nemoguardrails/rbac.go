package nemoguardrails

// What NemoGuardrails need, generated into config/rbac/role.yaml by `make
// manifests`. The objects the chart renders (Deployments, Services,
// ServiceAccounts, ConfigMaps, Ingresses, Routes, cert-manager's
// Certificates and Issuers) and the proxy's ClusterRoleBindings (get, list,
// create, delete; never update) are TrustyAIService's rules too. Unlike
// upstream: no Secrets, no EnvoyFilters, no MCPGatewayExtensions or Gateways
// (the EnvoyFilter goes in another namespace: docs/trustyai.md).
//
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=nemoguardrails,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=nemoguardrails/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=nemoguardrails/finalizers,verbs=update
