package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestImage builds the image as `make image` does, reads the tarball
// back as `docker load` would, and checks what a cluster would run: the
// config (user, entrypoint, labels), the files (no shell, nothing but the
// binary, users, certificates), the binary (static, stripped) and that
// the binary runs, as the image's user inside the image's root
// filesystem where the test may chroot (root), else on the host.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds raydar (skipped with -short)")
	}
	ctx, cancel := buildContext(t)
	defer cancel()
	dir := t.TempDir()
	out := filepath.Join(dir, "raydar-image.tar")
	o := Options{Module: "../..", Go: "go", Image: "example.test/raydar:v9.9.9-test", Out: out, Binary: filepath.Join(dir, "raydar-linux"),
		Arch: runtime.GOARCH, CACerts: "/etc/ssl/certs/ca-certificates.crt", Version: "v9.9.9-test"}
	if _, err := os.Stat(o.CACerts); err != nil {
		t.Skipf("no CA bundle on this host: %v", err)
	}
	if err := run(ctx, o, t.Logf); err != nil {
		t.Fatal(err)
	}

	tag, err := name.NewTag(o.Image)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatalf("the tarball does not load as %s: %v", tag, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532 (distroless nonroot; config/manager's runAsUser)", cf.Config.User)
	}
	if diff := cmp.Diff([]string{"/raydar-operator"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("Entrypoint (-want +got):\n%s", diff)
	}
	if len(cf.Config.Cmd) != 0 {
		t.Errorf("Cmd = %q, want none (config/manager gives the flags as args)", cf.Config.Cmd)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.title":   "raydar",
		"org.opencontainers.image.version": "v9.9.9-test",
		"org.opencontainers.image.source":  "https://github.com/raydar/raydar",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if cf.Config.Labels["org.opencontainers.image.created"] == "" || cf.Config.Labels["org.opencontainers.image.revision"] == "" {
		t.Errorf("labels without created or revision: %v", cf.Config.Labels)
	}

	files := readFS(t, img)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	wantNames := []string{"etc", "etc/group", "etc/nsswitch.conf", "etc/passwd", "etc/ssl", "etc/ssl/certs",
		"etc/ssl/certs/ca-certificates.crt", "home", "home/nonroot", "raydar-operator", "tmp"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("files of the image (-want +got): nothing but the binary, users and certificates, no shell:\n%s", diff)
	}
	for _, sh := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/env"} {
		if _, ok := files[sh]; ok {
			t.Errorf("the image has a shell or tool: /%s", sh)
		}
	}
	if h := files["raydar-operator"].hdr; h.Mode&0o777 != 0o755 || h.Uid != 0 {
		t.Errorf("/raydar-operator mode %o uid %d, want 755 owned by root (not writable by the user it runs as)", h.Mode, h.Uid)
	}
	if h := files["tmp"].hdr; h.Mode&0o7777 != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", h.Mode)
	}
	if h := files["home/nonroot"].hdr; h.Uid != 65532 || h.Gid != 65532 {
		t.Errorf("/home/nonroot owned by %d:%d, want 65532:65532", h.Uid, h.Gid)
	}
	if !strings.Contains(string(files["etc/passwd"].body), "nonroot:x:65532:65532:") ||
		!strings.Contains(string(files["etc/group"].body), "nonroot:x:65532:") {
		t.Errorf("/etc/passwd or /etc/group without nonroot 65532:\n%s\n%s", files["etc/passwd"].body, files["etc/group"].body)
	}
	host, _ := os.ReadFile(o.CACerts)
	if !bytes.Equal(files["etc/ssl/certs/ca-certificates.crt"].body, host) {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt differs from the build host's %s", o.CACerts)
	}

	bin := files["raydar-operator"].body
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("/raydar-operator is not ELF: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/raydar-operator has a %s program header: not a static binary", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("/raydar-operator needs shared libraries %v", libs)
	}
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("/raydar-operator has a symbol table (err %v): not built with -ldflags -s", err)
	}
	f.Close()
	if bytes.Contains(bin, []byte(mustAbs(t, "../.."))) {
		t.Errorf("/raydar-operator contains the build directory %s: not built with -trimpath", mustAbs(t, "../.."))
	}

	// Run it. The image's root filesystem, unpacked: where the test runs as
	// root it chroots there as 65532 (no /usr/share/zoneinfo, no shell, no
	// libc), as the container would.
	root := filepath.Join(dir, "rootfs")
	unpack(t, img, root)
	cmd := exec.CommandContext(ctx, filepath.Join(root, "raydar-operator"), "version")
	where := "on the host"
	if os.Geteuid() == 0 {
		cmd = exec.CommandContext(ctx, "/raydar-operator", "version")
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
		cmd.Dir = "/"
		cmd.Env = cf.Config.Env
		where = "in the image's root filesystem as 65532"
	}
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("raydar-operator version %s: %v\n%s", where, err, got)
	}
	if strings.TrimSpace(string(got)) != "v9.9.9-test" {
		t.Errorf("raydar-operator version %s printed %q, want the stamped v9.9.9-test", where, got)
	}
	t.Logf("raydar-operator version %s: %s", where, bytes.TrimSpace(got))

	// Same inputs, same image: the config (which names every layer's
	// digest) does not depend on when it was assembled. (The tarball keeps
	// no manifest, so the config digest is what survives docker load.)
	again, err := imageFrom(o.Binary, o.CACerts, BuildInfo{Version: "v9.9.9-test", Revision: cf.Config.Labels["org.opencontainers.image.revision"],
		Created: cf.Created.Time})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.ConfigName()
	d2, _ := again.ConfigName()
	if d1 != d2 {
		t.Errorf("reassembled from the same binary: config %s, first %s (not reproducible)", d2, d1)
	}
}

// TestPush pushes an image as `make image-push` does, to a registry
// served by go-containerregistry's in-memory registry on loopback, and
// pulls it back: the same manifest digest, the same user.
func TestPush(t *testing.T) {
	if testing.Short() {
		t.Skip("builds raydar (skipped with -short)")
	}
	ctx, cancel := buildContext(t)
	defer cancel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	o := Options{Module: "../..", Go: "go", Image: host + "/team/raydar:v9.9.9-test", Out: filepath.Join(dir, "raydar-image.tar"),
		Binary: filepath.Join(dir, "raydar-linux"), Arch: runtime.GOARCH, CACerts: "/etc/ssl/certs/ca-certificates.crt",
		Version: "v9.9.9-test", Push: true}
	if _, err := os.Stat(o.CACerts); err != nil {
		t.Skipf("no CA bundle on this host: %v", err)
	}
	var said []string
	if err := run(ctx, o, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(o.Image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling %s back: %v", ref, err)
	}
	d, err := pulled.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(said, func(l string) bool { return strings.Contains(l, "pushed") && strings.Contains(l, d.String()) }) {
		t.Errorf("the registry holds %s, which hack/image did not say it pushed: %q", d, said)
	}
	mt, _ := pulled.MediaType()
	if mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want %s", mt, types.OCIManifestSchema1)
	}
	cf, err := pulled.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || !slices.Equal(cf.Config.Entrypoint, Entrypoint) {
		t.Errorf("pulled image runs %q as %q", cf.Config.Entrypoint, cf.Config.User)
	}
}

type tarFile struct {
	hdr  tar.Header
	body []byte
}

// readFS reads the image's flattened file system, keyed by path without
// the leading / or trailing /.
func readFS(t *testing.T, img v1.Image) map[string]tarFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]tarFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.Trim(h.Name, "/")] = tarFile{hdr: *h, body: b}
	}
}

// unpack writes the image's file system under root with its modes and
// owners (owners only where the test runs as root).
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	files := readFS(t, img)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names) // parents first
	for _, n := range names {
		f := files[n]
		p := filepath.Join(root, n)
		mode := os.FileMode(f.hdr.Mode & 0o777)
		if f.hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch f.hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.WriteFile(p, f.body, 0o600); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected entry type %c for %s", f.hdr.Typeflag, n)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Chown(p, f.hdr.Uid, f.hdr.Gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// buildContext bounds a test that builds raydar by the test binary's own
// deadline (-timeout), less a margin to report in: a static build with a
// cold cache for its flags took over 10 minutes on a loaded 2-core
// machine, and a fixed bound of its own failed a run that had time left.
func buildContext(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), d.Add(-30*time.Second))
	}
	return context.WithCancel(context.Background())
}
