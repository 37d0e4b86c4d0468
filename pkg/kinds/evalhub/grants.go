package evalhub

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalhubv1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/evalhub/v1"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/naming"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release"
)

// LabelTenant on a Namespace (upstream's label) makes it a tenant of the
// multi-tenant EvalHubs in the namespaces the operator's setting
// evalhub-hub-namespaces grants; a value other than "" and "true" names the
// one hub namespace whose EvalHubs it is a tenant of.
const LabelTenant = "evalhub.trustyai.opendatahub.io/tenant"

// Labels of the objects an EvalHub's grants are made of (outside its Helm
// release): whose they are, so that they are found across namespaces and
// deleted with the EvalHub or the grant.
const (
	labelOwnerName = "trustyai.opendatahub.io/owner-name"
	// LabelGrant marks an object of an EvalHub's grants.
	LabelGrant = "evalhub.trustyai.opendatahub.io/grant"
)

// RolePrefix starts the names of the ClusterRoles the grants bind
// (config/rbac/evalhub_roles.yaml, with config/default's name prefix).
const RolePrefix = "ai-stack-operator-evalhub-"

// The ClusterRoles, by their name after RolePrefix: upstream's roles of
// the same names (jobs-writer, ...), and three that stand for the Roles
// upstream writes in each namespace (job-access, pod-logs, proxy-access).
const (
	roleJobsWriter       = "jobs-writer"
	roleJobConfig        = "job-config"
	roleHardwareProfiles = "hardware-profiles-reader"
	roleEvents           = "events"
	roleMLflowAccess     = "mlflow-access"
	roleMLflowJobs       = "mlflow-jobs-access"
	roleModelSecret      = "model-secret"
	roleProviders        = "providers-access"
	roleCollections      = "collections-access"
	rolePodLogs          = "pod-logs"
	roleJobAccess        = "job-access"
	roleProxyAccess      = "proxy-access"
)

// BoundRoles are every ClusterRole an EvalHub's grants bind, full names.
func BoundRoles() []string {
	var out []string
	for _, r := range []string{roleJobsWriter, roleJobConfig, roleHardwareProfiles, roleEvents, roleMLflowAccess, roleMLflowJobs, roleModelSecret, roleProviders, roleCollections, rolePodLogs, roleJobAccess, roleProxyAccess} {
		out = append(out, RolePrefix+r)
	}
	return out
}

// tenancyInputs are what decides an EvalHub's tenants.
type tenancyInputs struct {
	// HubNamespaces and TenantNamespaces are the operator's settings.
	HubNamespaces, TenantNamespaces []string
	// Labelled are the namespaces labelled LabelTenant, with the label's value.
	Labelled map[string]string
}

// Tenants are the namespaces an EvalHub serves besides its own: none in
// single tenancy or outside a hub namespace; otherwise the namespaces the
// settings list and those labelled for it (the label's value empty, "true"
// or the hub's namespace). Sorted; pure.
func Tenants(cr *evalhubv1.EvalHub, in tenancyInputs) []string {
	if cr.Spec.Tenancy == evalhubv1.TenancySingle || !slices.Contains(in.HubNamespaces, cr.Namespace) {
		return nil
	}
	set := map[string]bool{}
	for _, ns := range in.TenantNamespaces {
		set[ns] = true
	}
	for ns, v := range in.Labelled {
		if v == "" || v == "true" || v == cr.Namespace {
			set[ns] = true
		}
	}
	delete(set, cr.Namespace)
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

var notLabelChar = regexp.MustCompile(`[^a-z0-9-]+`)

// norm makes a DNS-1123 label of s as upstream names the jobs'
// ServiceAccount and its bindings: lowercase, other characters to '-', at
// most 63 characters (cut, with a hash of s) — so that eval-hub finds the
// ServiceAccount it runs jobs as.
func norm(s string) string {
	v := strings.Trim(notLabelChar.ReplaceAllString(strings.ToLower(strings.TrimSpace(s)), "-"), "-")
	if v == "" {
		v = "x"
	}
	if len(v) <= 63 {
		return v
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:10]
	p := strings.Trim(v[:52], "-")
	if p == "" {
		p = "x"
	}
	return p + "-" + h
}

// grantName names one of the CR's RoleBindings: evalhub.<namespace>.<name>.<what>.
// A namespace and an EvalHub's name hold no dots, so no two EvalHubs share
// a name in any namespace (upstream's <name>-<namespace>-<what>-rb, which
// this operator used too, is the same for EvalHub x-y in namespace h and
// EvalHub x in namespace y-h).
func grantName(cr *evalhubv1.EvalHub, what string) string {
	return "evalhub." + cr.Namespace + "." + cr.Name + "." + what
}

// jobServiceAccount is the ServiceAccount evaluation jobs run as, in the
// hub's namespace and each tenant's: eval-hub's name for it, which eval-hub
// derives from its instance's name and namespace (EVALHUB_INSTANCE_NAME and
// the pod's namespace: <name>-<namespace>-job), so it is not the operator's
// to choose. Two EvalHubs whose names and namespaces join to the same
// string (x-y in h, x in y-h) share it in a common tenant: the second finds
// it taken and says so (syncGrants).
func jobServiceAccount(cr *evalhubv1.EvalHub) string {
	return norm(cr.Name + "-" + cr.Namespace + "-job")
}

// grantLabels mark an object of the CR's grants: whose it is, by kind,
// namespace, name and UID (the sweeper deletes the grants of an EvalHub
// that is gone, by UID, whether or not its reconcile runs).
func grantLabels(cr *evalhubv1.EvalHub) map[string]string {
	return map[string]string{
		release.LabelManaged:         "true",
		LabelGrant:                   "true",
		release.LabelOwnerKind:       evalhubv1.Kind,
		release.LabelOwnerNamespace:  cr.Namespace,
		labelOwnerName:               naming.NameLabel(cr.Name),
		release.LabelOwnerUID:        string(cr.UID),
		"app":                        "eval-hub",
		"app.kubernetes.io/instance": naming.NameLabel(cr.Name),
		"app.kubernetes.io/part-of":  "eval-hub",
	}
}

// ours says whether an object carries the CR's grant labels, the
// operator's among them.
func ours(cr *evalhubv1.EvalHub, labels map[string]string) bool {
	return labels[release.LabelManaged] == "true" && labels[LabelGrant] == "true" && labels[release.LabelOwnerKind] == evalhubv1.Kind &&
		labels[release.LabelOwnerNamespace] == cr.Namespace && labels[labelOwnerName] == naming.NameLabel(cr.Name)
}

// grantObjects are the objects of the CR's grants in its namespace and in
// each tenant: the jobs' ServiceAccount; RoleBindings of the shipped
// ClusterRoles for it and for the server's ServiceAccount <name>-service;
// in tenants, the service CA ConfigMap the jobs mount and, when the hub has
// one, a copy of its MLflow CA bundle. In the hub's namespace they are
// owned by the CR; in tenants, labels say whose they are.
func grantObjects(cr *evalhubv1.EvalHub, tenants []string, mlflowBundle map[string]string, tenantSecrets bool) []client.Object {
	api := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: cr.Namespace, Name: serviceAccountName(cr.Name)}
	job := jobServiceAccount(cr)
	var out []client.Object
	for _, ns := range append([]string{cr.Namespace}, tenants...) {
		meta := func(name string) metav1.ObjectMeta {
			m := metav1.ObjectMeta{Namespace: ns, Name: name, Labels: grantLabels(cr)}
			if ns == cr.Namespace {
				m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cr, evalhubv1.GroupVersion.WithKind(evalhubv1.Kind))}
			}
			return m
		}
		bind := func(suffix, role string, s rbacv1.Subject) {
			out = append(out, &rbacv1.RoleBinding{
				ObjectMeta: meta(grantName(cr, suffix)),
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RolePrefix + role},
				Subjects:   []rbacv1.Subject{s},
			})
		}
		jobSubject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: job}
		out = append(out, &corev1.ServiceAccount{ObjectMeta: meta(job)})
		bind("job-access", roleJobAccess, jobSubject)
		bind("mlflow-job", roleMLflowJobs, jobSubject)
		if ns == cr.Namespace || tenantSecrets {
			bind("model-secret", roleModelSecret, api)
		}
		bind("mlflow-service", roleMLflowAccess, api)
		bind("job-writer", roleJobsWriter, api)
		bind("job-config", roleJobConfig, api)
		bind("hardware-profiles-reader", roleHardwareProfiles, api)
		bind("events", roleEvents, api)
		bind("service-pod-logs", rolePodLogs, api)
		if ns == cr.Namespace {
			bind("providers-access", roleProviders, api)
			bind("collections-access", roleCollections, api)
			bind("service-access", roleProxyAccess, api)
			continue
		}
		ca := meta(cr.Name + "-service-ca")
		ca.Annotations = map[string]string{"service.beta.openshift.io/inject-cabundle": "true"}
		out = append(out, &corev1.ConfigMap{ObjectMeta: ca})
		if mlflowBundle != nil {
			out = append(out, &corev1.ConfigMap{ObjectMeta: meta(bundleName(cr.Name)), Data: mlflowBundle})
		}
	}
	return out
}
