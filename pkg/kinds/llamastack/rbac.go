package llamastack

// What LlamaStackDistributions need, generated into config/rbac/role.yaml
// (with the operator's own rules in pkg/operator) by `make manifests`.
// No Secret verb at all: the chart renders no Secrets.
//
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=llamastack.io,resources=llamastackdistributions/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;persistentvolumeclaims;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies;ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=route.openshift.io,resources=routes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;list;watch;create;update;patch;delete
//
// The anyuid RoleBinding <name>-rb, rendered only on OpenShift when the
// anyuid-role-binding setting is on. Binding a ClusterRole needs either
// every permission it grants (use of the anyuid SCC, which upstream holds)
// or bind on that one role: this operator holds bind, so it can never run
// anything under anyuid itself.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames="system:openshift:scc:anyuid"
