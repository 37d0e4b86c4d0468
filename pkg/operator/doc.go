// Package operator is the registry of the kinds the operator serves (their
// schemes and how each is built) and the manager wiring: caches limited by
// label, one release reconciler per watches.yaml entry, the release sweep,
// metrics and health checks. It holds no business rules: the reconciler is
// pkg/release, each kind is pkg/kinds/<kind>.
package operator
