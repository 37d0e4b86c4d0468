package evalhub

// What EvalHubs need, generated into config/rbac/role.yaml by `make
// manifests`. The objects the chart renders (Deployments, Services,
// ServiceAccounts, ConfigMaps, Routes, ServiceMonitors, cert-manager's
// Certificates and Issuers) are TrustyAIService's rules too.
//
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=evalhubs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=evalhubs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=evalhubs/finalizers,verbs=update
