// Command image builds raydar's container image without a Docker engine:
// a static linux binary of ./cmd/raydar-operator, the reconcile loop
// without the terminal UI and the sandbox (CGO off, -trimpath, stripped,
// version-stamped, with Go's embedded time zone database so that a
// RayCronJob's spec.timeZone resolves in an image without
// /usr/share/zoneinfo) on a distroless-style root filesystem made from
// scratch: /etc/passwd and /etc/group with the nonroot user 65532, the
// build host's CA certificates, an empty /tmp and /home/nonroot, and
// nothing else (no shell, no package manager).
//
// It writes a docker-loadable tarball (`docker load -i`, `kind load
// image-archive`) and, with --push, pushes the image to a registry with
// the credentials of the default keychain (~/.docker/config.json and its
// credential helpers), as crane push does.
//
//	go run ./hack/image --out bin/raydar-image.tar --image raydar:dev [--push]
//
// `make image` and `make image-push` run it. The build flags live here
// (staticBuildArgs) and nowhere else; hack/image's test builds the image
// and checks it, test/deploy runs its binary against a sandbox.
package main
