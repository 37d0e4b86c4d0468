// Package ogx is the OGXServer kind (ogx.io/v1beta1) for the release
// reconciler: what an OGXServer reads (Gather), the chart values it becomes
// (Values, charts/ogx-server), the CA bundle it mounts (Prepare) and the
// status it reports (Status). Object names, labels, ports, env and paths
// are upstream ogx-k8s-operator's, so that Services, NetworkPolicies and
// clients written for it keep working.
package ogx
