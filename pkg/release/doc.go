// Package release is the generic release reconciler: one CR of any kind
// through its embedded chart, and the Kind contract a kind implements
// (kind.go). It imports no kind.
//
// One reconcile (reconcile.go, top to bottom):
//
//  1. Fetch the CR; add the finalizer (a CR being deleted goes to 6).
//  2. Gather: the kind reads what the translation needs besides the CR
//     (settings, CA sources, claims); read-only.
//  3. Values: the kind translates CR and inputs into chart values.
//  4. Prepare: the kind writes what the chart mounts, outside Helm (the
//     merged CA bundle, pkg/cabundle).
//  5. Apply (apply.go): install, upgrade only when values or chart changed,
//     or repair drift; every manifest through the gate (the chart's policy
//     and the ownership of every name), records in the operator's namespace
//     (internal/helm). Then Finish: what the kind writes outside Helm for
//     the CR's objects once they passed the gate (bindings, wiring).
//  6. Or, for a CR being deleted, the operator's own uninstall, the kind's
//     Cleanup, and the finalizer goes.
//  7. Status: the kind computes the status from the Observation (what the
//     pass learned: a Failure, the release's objects, what Finish returned);
//     one deferred write when it changed, an event per condition that
//     turned; then the requeue (the period, sooner for what no watch sees).
//
// A *status.Failure anywhere is a problem the user or the administrator
// fixes: it reaches Status unchanged and waits for a change; any other error
// is retried with backoff. What is not written again is remembered in the
// reconciler's caches (caches.go), each a field of the Reconciler.
//
// Besides the loop: the watches a kind asks for (reconciler.go, watches.go),
// capability detection (capabilities.go), the sweep of records whose CR is
// gone (sweep.go), the phase metrics (metrics.go), and Deps, the toolbox of
// reads the kinds embed (deps.go).
package release
