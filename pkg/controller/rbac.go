package controller

// The operator's permissions, generated into config/rbac/role.yaml by `make manifests`.
// Secrets are Helm's release storage: read by name and label selector, never watched.
//
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
