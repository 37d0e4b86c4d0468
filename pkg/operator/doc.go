// Package operator is the registry of the kinds the operator serves (their
// schemes, how each is built, or its own controller's setup) and the manager
// wiring: caches limited by label, one release reconciler per rendered kind
// (with a watches file's settings when one is given), the release sweep,
// metrics and health checks. It holds no business rules: the reconciler is
// pkg/release, each kind is pkg/kinds/<kind>.
package operator
