// Command controlplane starts a local control plane (kube-apiserver and etcd
// from KUBEBUILDER_ASSETS, through controller-runtime's envtest), installs the
// CRDs of config/crd/bases, writes a kubeconfig and runs until interrupted.
// `make demo` uses it; it is not part of the operator.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	kubeconfig := flag.String("out", ".demo/kubeconfig", "where to write the kubeconfig")
	crds := flag.String("crds", "config/crd/bases", "folder of CRDs to install")
	flag.Parse()

	env := &envtest.Environment{CRDDirectoryPaths: []string{*crds}, ErrorIfCRDPathMissing: true}
	if _, err := env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		os.Exit(1)
	}
	code := 0
	if err := os.WriteFile(*kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "write kubeconfig: %v\n", err)
		code = 1
	} else {
		fmt.Printf("control plane ready; kubeconfig: %s\n", *kubeconfig)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
