// Package guard enforces the tenant boundary on what the operator applies.
//
// Whoever may create a custom resource is a tenant of its namespace. Nothing
// in a CR may make the operator write outside that namespace, create a kind
// its chart does not declare, or touch an object it did not create. The
// charts quote every string they take from a CR; this package is the second
// line, in Go, on the manifest itself:
//
//   - Check parses every document of a rendered (or stored) manifest and
//     refuses it whole when one object is outside the CR's namespace, of a
//     kind the chart does not declare, a Helm hook, a List, unnamed, or a
//     duplicate. Nothing of a refused manifest is applied.
//   - CheckObjects applies the same rules to objects already parsed: what
//     Helm's kube client builds from a manifest, which is what Helm applies
//     (the items of a List among them).
//   - Ownership says whether a live object is one the operator created for a
//     given release and CR; an object of the same name that is not is a name
//     conflict, and the operator neither overwrites nor deletes it.
//
// The package is pure: it reads manifests and object metadata and imports
// nothing from controller-runtime. Its errors name the object and the rule,
// never more of the manifest than that.
package guard
