// Command package-server is OLM v0.38.0's package server (the aggregated API
// packages.operators.coreos.com that lists PackageManifests) as a process
// outside the cluster, for the real-OLM test: OLM's own command with its
// options, but with delegated authentication and authorization off. In
// v0.38.0 the delegated authorizer reads only the in-cluster configuration
// (pkg/package-server/server/server.go sets the authentication options'
// kubeconfig where it means the authorization options'), which a process
// outside a pod has not, so the server would retry forever; with them off it
// serves every request the API server's aggregator proxies to it.
package main

import (
	"flag"
	"os"

	"github.com/operator-framework/operator-lifecycle-manager/pkg/lib/signals"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/package-server/server"
	log "github.com/sirupsen/logrus"
)

func main() {
	options := server.NewPackageServerOptions(os.Stdout, os.Stderr)
	options.DisableAuthForTesting = true
	cmd := server.NewCommandStartPackageServer(signals.Context(), options)
	cmd.Flags().AddGoFlagSet(flag.CommandLine)
	if err := cmd.Execute(); err != nil {
		log.Fatal(err)
	}
}
