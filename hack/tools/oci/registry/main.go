// Command registry is an OCI registry on a loopback address, in memory
// (distribution v3, the registry Docker Hub and most others run), serving
// TLS with the given certificate: where the OLM v1 test pushes the catalog
// and bundle images that catalogd and operator-controller pull.
//
//	registry -addr 127.0.0.1:5000 -cert tls.crt -key tls.key
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "the address to serve on")
	cert := flag.String("cert", "", "the TLS certificate (PEM)")
	key := flag.String("key", "", "the TLS key (PEM)")
	flag.Parse()
	cfg := &configuration.Configuration{}
	cfg.HTTP.Addr = *addr
	cfg.HTTP.TLS.Certificate = *cert
	cfg.HTTP.TLS.Key = *key
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Log.Level = "warn"
	cfg.Log.AccessLog.Disabled = true
	r, err := registry.NewRegistry(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := r.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
