#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, if missing. Idempotent.
set -euo pipefail
need=()
[ -x /usr/lib/git-core/git-http-backend ] || need+=(git)
# porch-testkit's SshServer runs sshd (and ssh-keygen/ssh from openssh-client, a dependency).
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
# fn-container runs function images in bubblewrap; its tests start distribution's registry,
# push images with skopeo and build them from busybox-static.
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
# kpt's yaml_v3_differential test compares comment placement with go-yaml v3 itself.
command -v go >/dev/null 2>&1 || need+=(golang-go)
[ -d /usr/share/gocode/src/gopkg.in/yaml.v3 ] || need+=(golang-gopkg-yaml.v3-dev)
# krm-functions' starlark_go_differential test runs scripts through go.starlark.net itself.
[ -d /usr/share/gocode/src/go.starlark.net/starlark ] || need+=(golang-starlark-dev)
# porchctl's pflag::go_differential reads command lines with cobra, pflag and klog themselves.
[ -d /usr/share/gocode/src/github.com/spf13/cobra ] || need+=(golang-github-spf13-cobra-dev)
[ -d /usr/share/gocode/src/github.com/spf13/pflag ] || need+=(golang-github-spf13-pflag-dev)
[ -d /usr/share/gocode/src/k8s.io/klog ] || need+=(golang-k8s-klog-dev)
# Go-oracle differentials of kpt's image references and tag constraints and the API
# server's JSON patches.
for pkg in golang-github-docker-distribution-dev golang-github-opencontainers-go-digest-dev \
  golang-github-masterminds-semver-dev golang-github-evanphx-json-patch-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || need+=("$pkg")
done
command -v cargo-nextest >/dev/null 2>&1 || cargo install --locked cargo-nextest
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    echo "missing Debian packages: ${need[*]} (install them with apt-get)" >&2
    exit 1
  fi
fi
# porch-fn-runner's interoperability test: a Python gRPC client (venv under ~/.cache).
"$(dirname "$0")/python-grpc.sh" >/dev/null
