package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Options are the command's flags.
type Options struct {
	Module  string // the raydar module's directory (has go.mod)
	Go      string // the go command
	Image   string // the image reference: the tarball's tag and, with Push, where it goes
	Out     string // the docker-loadable tarball
	Binary  string // where the static binary is written (kept for inspection)
	Arch    string // GOARCH of the binary and the image
	CACerts string // the PEM bundle copied into the image
	Version string // overrides git describe
	Push    bool
}

func main() {
	o := Options{}
	flag.StringVar(&o.Module, "module", ".", "directory of the raydar module")
	flag.StringVar(&o.Go, "go", "go", "the go command")
	flag.StringVar(&o.Image, "image", "raydar:dev", "image reference: the tag in the tarball and, with --push, where to push (REGISTRY/raydar:TAG)")
	flag.StringVar(&o.Out, "out", "bin/raydar-image.tar", "docker-loadable image tarball to write")
	flag.StringVar(&o.Binary, "binary", "", "where to write the static binary (default: beside --out, raydar-linux-ARCH)")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "GOARCH of the binary and the image")
	flag.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM CA bundle of the build host, copied into the image")
	flag.StringVar(&o.Version, "version", "", "version stamped into the binary and the labels (default: git describe --tags --always --dirty)")
	flag.BoolVar(&o.Push, "push", false, "also push the image to --image's registry (credentials: the default keychain, ~/.docker/config.json)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "hack/image takes no arguments, only flags")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }); err != nil {
		fmt.Fprintln(os.Stderr, "hack/image:", err)
		os.Exit(1)
	}
}

// run builds the binary, assembles the image, writes the tarball and
// pushes when asked. logf says what it did.
func run(ctx context.Context, o Options, logf func(string, ...any)) error {
	tag, err := name.NewTag(o.Image)
	if err != nil {
		return fmt.Errorf("--image %q is not an image reference with a tag (REGISTRY/raydar:TAG): %w", o.Image, err)
	}
	info, notes := gitBuildInfo(ctx, o.Module)
	for _, n := range notes {
		logf("note: %s", n)
	}
	if o.Version != "" {
		info.Version = o.Version
	}
	if o.Binary == "" {
		o.Binary = filepath.Join(filepath.Dir(o.Out), "raydar-linux-"+o.Arch)
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.Binary), 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Binary)
	if err != nil {
		return err
	}
	logf("building %s (linux/%s, static, version %s)", o.Binary, o.Arch, info.Version)
	if err := buildBinary(ctx, o.Go, o.Module, abs, o.Arch, info.Version); err != nil {
		return err
	}
	img, err := imageFrom(abs, o.CACerts, info)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(o.Out, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", o.Out, err)
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	logf("wrote %s: %s (%s); load it with docker load -i %s or kind load image-archive %s", o.Out, tag, d, o.Out, o.Out)
	if !o.Push {
		return nil
	}
	if err := push(ctx, tag, img); err != nil {
		return err
	}
	logf("pushed %s@%s", tag.Context(), d)
	return nil
}

// push writes img to tag's registry as crane push does, with the
// credentials of the default keychain (~/.docker/config.json, its
// credential helpers; anonymous where it has none).
func push(ctx context.Context, tag name.Tag, img v1.Image) error {
	if err := remote.Write(tag, img, remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing %s: %w", tag, err)
	}
	return nil
}

// imageFrom reads the binary and the CA bundle and assembles the image.
func imageFrom(binary, caCerts string, info BuildInfo) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(caCerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates for the image: %w (install ca-certificates, or pass --ca-certs)", err)
	}
	return Assemble(Inputs{Binary: bin, CACerts: certs, Info: info})
}
