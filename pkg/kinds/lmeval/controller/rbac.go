package controller

// What the LMEvalJob reconciler does with each kind, and no more (make
// manifests turns these into config/rbac/role.yaml, and so into the bundle's
// CSV):
//   - lmevaljobs: read and watch; patch only to drop upstream's finalizer
//     from a job being deleted. Its status: written by the reconciler, and
//     get and patch of one job's status are what the driver's Role grants
//     (a Role can grant only what its creator holds).
//   - pods: the job's pod, watched through a cache of the operator's pods,
//     created, and deleted on cancel, suspend, re-run and eviction. Never
//     pods/exec: the driver reports through the job's status.
//   - serviceaccounts, persistentvolumeclaims, configmaps (the CA bundle),
//     roles and rolebindings (the driver's): created, and read by name when
//     one exists already (is it the job's?); configmaps are also the CA
//     bundle's sources and the settings, read by name.
//
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=lmevaljobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=lmevaljobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts;persistentvolumeclaims;configmaps,verbs=get;create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;create
//
// Kueue, where it is served (a job labelled kueue.x-k8s.io/queue-name): the
// job's Workload is created, watched (the operator's label only), deleted
// when a re-run replaces it; its status is patched to hand an evicted
// Workload's quota back and to mark it Finished. ResourceFlavors (the
// admission's node labels and tolerations) and WorkloadPriorityClasses (the
// job's kueue.x-k8s.io/priority-class) are read by name.
//
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors;workloadpriorityclasses,verbs=get
