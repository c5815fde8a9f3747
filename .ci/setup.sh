#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, if missing. Idempotent.
set -euo pipefail
need=()
[ -x /usr/lib/git-core/git-http-backend ] || need+=(git)
# porch-testkit's SshServer runs sshd (and ssh-keygen/ssh from openssh-client, a dependency).
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v cargo-nextest >/dev/null 2>&1 || cargo install --locked cargo-nextest
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    echo "missing Debian packages: ${need[*]} (install them with apt-get)" >&2
    exit 1
  fi
fi
