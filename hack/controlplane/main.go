// Command controlplane starts the local cluster of internal/localcluster (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok's simulated
// nodes, from KUBEBUILDER_ASSETS), installs the CRDs of config/crd/bases,
// writes a kubeconfig and runs until interrupted; then it stops every process
// it started. `make demo` and `make test-e2e` use it; it is not part of the
// operator.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/ai-stack-operator/ai-stack-operator/internal/localcluster"
)

func main() {
	dir := flag.String("dir", ".demo/cluster", "folder for the kubeconfig and the logs of each process")
	crds := flag.String("crds", "config/crd/bases", "folder of CRDs to install")
	nodes := flag.Int("nodes", 3, "simulated nodes")
	bare := flag.Bool("bare", false, "etcd and kube-apiserver only: no controllers, scheduler or nodes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: *dir, CRDDirs: []string{*crds}, Nodes: *nodes, WithoutWorkloads: *bare})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start local cluster: %v\n", err)
		stop()
		os.Exit(1) //nolint:gocritic // stop() ran: nothing else is deferred
	}
	abs, _ := filepath.Abs(c.Kubeconfig)
	fmt.Printf("local cluster ready; kubeconfig: %s\n", abs)
	<-ctx.Done()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop local cluster: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("local cluster stopped")
}
