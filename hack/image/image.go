package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: distroless's nonroot, which config/manager's pod
// security context names too.
const (
	nonrootUID = 65532
	nonrootGID = 65532
)

// Entrypoint is what the image runs: the headless reconcile loop
// (cmd/raydar-operator, the flags of `raydar operator`).
// config/manager/manager.yaml adds the flags.
var Entrypoint = []string{"/" + binaryName}

// binaryName is the image's one executable.
const binaryName = "raydar-operator"

const (
	passwdFile = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	groupFile = "root:x:0:\nnonroot:x:65532:\n"
	// Go's resolver reads hosts: to pick /etc/hosts before DNS.
	nsswitchFile = "hosts: files dns\n"
)

// Inputs are everything the image is made of.
type Inputs struct {
	Binary  []byte // the static linux raydar-operator binary
	CACerts []byte // a PEM bundle, installed as /etc/ssl/certs/ca-certificates.crt
	Info    BuildInfo
}

// Assemble builds the image: a base layer (users, certificates, /tmp,
// the home directory) and a layer holding /raydar-operator, owned by root and not
// writable by the user it runs as. Every file time is Info.Created, so
// the same inputs give the same digest.
func Assemble(in Inputs) (v1.Image, error) {
	arch, err := elfArch(in.Binary)
	if err != nil {
		return nil, err
	}
	if len(in.CACerts) == 0 {
		return nil, fmt.Errorf("no CA certificates: the operator could not verify any TLS server but the API server")
	}
	mtime := in.Info.Created
	base, err := tarLayer([]entry{
		dir("etc/", 0o755, 0, 0),
		file("etc/passwd", 0o644, []byte(passwdFile)),
		file("etc/group", 0o644, []byte(groupFile)),
		file("etc/nsswitch.conf", 0o644, []byte(nsswitchFile)),
		dir("etc/ssl/", 0o755, 0, 0),
		dir("etc/ssl/certs/", 0o755, 0, 0),
		file("etc/ssl/certs/ca-certificates.crt", 0o644, in.CACerts),
		dir("home/", 0o755, 0, 0),
		dir("home/nonroot/", 0o700, nonrootUID, nonrootGID),
		dir("tmp/", 0o1777, 0, 0),
	}, mtime)
	if err != nil {
		return nil, err
	}
	app, err := tarLayer([]entry{file(binaryName, 0o755, in.Binary)}, mtime)
	if err != nil {
		return nil, err
	}

	labels := map[string]string{
		"org.opencontainers.image.title":       "raydar",
		"org.opencontainers.image.description": "raydar's reconcile loop for KubeRay's ray.io/v1 kinds (raydar operator)",
		"org.opencontainers.image.source":      "https://github.com/raydar/raydar",
		"org.opencontainers.image.version":     in.Info.Version,
		"org.opencontainers.image.created":     mtime.Format(time.RFC3339),
	}
	if in.Info.Revision != "" {
		labels["org.opencontainers.image.revision"] = in.Info.Revision
	}
	cfg := &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", nonrootUID, nonrootGID),
			Entrypoint: Entrypoint,
			Env: []string{
				"PATH=/", // only /raydar-operator; there is nothing else to run
				"HOME=/home/nonroot",
				"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
			},
			WorkingDir: "/",
			Labels:     labels,
		},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	created := v1.Time{Time: mtime}
	if img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created,
			CreatedBy: "hack/image: /etc/passwd, /etc/group (nonroot 65532), CA certificates, /tmp"}},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer, History: v1.History{Created: created,
			CreatedBy: "hack/image: /" + binaryName + " " + in.Info.Version}},
	); err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, created)
}

// elfArch is the image architecture of a static linux ELF binary; it
// refuses a dynamically linked one (it would not start in the image).
func elfArch(bin []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return "", fmt.Errorf("the raydar-operator binary is not an ELF file: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("the raydar-operator binary is dynamically linked (it has a PT_INTERP program header): build it with CGO_ENABLED=0")
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("the raydar-operator binary is for %s, which this image builder does not name", f.Machine)
}

type entry struct {
	hdr  tar.Header
	body []byte
}

func dir(name string, mode int64, uid, gid int) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: gid}}
}

func file(name string, mode int64, body []byte) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body))}, body: body}
}

// tarLayer writes entries, in order, as one gzip-compressed layer.
func tarLayer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		h.ModTime = mtime
		if err := tw.WriteHeader(&h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", h.Name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", h.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
