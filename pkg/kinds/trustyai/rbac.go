package trustyai

// What TrustyAIServices need, generated into config/rbac/role.yaml (with the
// other kinds' and the operator's own rules) by `make manifests`.
//
// Secrets: none. Whether <name>-db-ca exists is read by name (metadata,
// without list, watch or cache) where an administrator granted ClusterRole
// ai-stack-operator-trustyai-db-ca-reader in the namespace
// (config/rbac/trustyai_db_ca_reader_role.yaml, docs/trustyai.md). Pods: list,
// for what the kubelet says of the database Secret in DATABASE mode.
// ClusterRoleBindings: the proxy's, by name; the operator holds the bound
// role's permissions (token and access reviews) itself. InferenceServices:
// watched as metadata, listed, and patched by server-side apply of
// spec.predictor.logger only; ModelMesh's Deployments (the Deployment rule
// the chart needs anyway): watched as metadata by label, listed by label,
// and patched by server-side apply of the payload processor and the
// certificate only (the model-server wiring). Istio's DestinationRules and
// VirtualServices: the chart's (the mesh's routes), which Helm creates,
// reads by name, patches and deletes; optional, so neither listed nor
// watched; Gather lists InferenceServices (as metadata) for them.
//
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=trustyaiservices,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=trustyaiservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trustyai.opendatahub.io,resources=trustyaiservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;persistentvolumeclaims;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=route.openshift.io,resources=routes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates;issuers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=serving.kserve.io,resources=inferenceservices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=networking.istio.io,resources=destinationrules;virtualservices,verbs=get;create;patch;delete
