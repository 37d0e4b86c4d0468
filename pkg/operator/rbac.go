package operator

// The operator's own permissions, whatever kinds it serves, generated into
// config/rbac/role.yaml (with each kind's rules, in pkg/kinds/<kind>) by
// `make manifests`: events, and the reviews that guard the metrics endpoint.
// No Secret verb at all: Helm's release records are ConfigMaps in the
// operator's namespace (config/rbac's Role there).
//
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
