// Package controller wires the operator: one Helm release reconciler per kind
// in watches.yaml, on helm-operator-plugins' action client, with caches
// limited by label. Business rules live in pkg/values and pkg/status; this
// package only gathers inputs, calls them and writes the results.
package controller
