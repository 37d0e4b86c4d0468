// Command push makes an image of a directory (one layer: the directory's
// files under -at, in sorted order with fixed times, so the same directory
// makes the same digest) with the given labels, and pushes it to a registry
// whose TLS certificate the -ca file verifies. It prints the digest
// reference. go-containerregistry; no container engine.
//
//	push -ca ca.crt -at /configs -label k=v DIR 127.0.0.1:5000/catalog:v1
package main

import (
	"archive/tar"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }
func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("label %q: want key=value", s)
	}
	l[k] = v
	return nil
}

func main() {
	ca := flag.String("ca", "", "the CA certificate (PEM) that verifies the registry")
	at := flag.String("at", "/", "where the directory's files go in the image")
	lbl := labels{}
	flag.Var(lbl, "label", "an image label key=value (repeatable)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: push [-ca FILE] [-at PATH] [-label k=v]... DIR REFERENCE")
		os.Exit(2)
	}
	out, err := run(flag.Arg(0), flag.Arg(1), *at, *ca, lbl)
	if err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}

func run(dir, reference, at, caFile string, lbl labels) (string, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Join(at, filepath.ToSlash(rel)), "/")
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = lbl
	cfg.OS, cfg.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return "", err
	}
	ref, err := name.ParseReference(reference)
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return "", err
		}
		pool.AppendCertsFromPEM(pem)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if err := remote.Write(ref, img, remote.WithTransport(tr)); err != nil {
		return "", err
	}
	var digest v1.Hash
	if digest, err = img.Digest(); err != nil {
		return "", err
	}
	return ref.Context().Name() + "@" + digest.String(), nil
}
