package ogx

// What OGXServers need, generated into config/rbac/role.yaml by `make
// manifests`. No Secret verb: Secret values reach the pods through
// secretKeyRef, which the kubelet resolves; the operator never reads them.
//
// +kubebuilder:rbac:groups=ogx.io,resources=ogxservers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ogx.io,resources=ogxservers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ogx.io,resources=ogxservers/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;persistentvolumeclaims;configmaps,verbs=get;list;watch;create;update;patch;delete
// Pods: list, to never mount an adopted claim another CR's pod still
// mounts (adopt.go).
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies;ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=route.openshift.io,resources=routes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors;prometheusrules,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames="system:openshift:scc:anyuid"
