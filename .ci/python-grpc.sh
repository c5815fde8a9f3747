#!/usr/bin/env bash
# A Python venv with grpcio and grpcio-tools, for the test that calls porch-fn-runner through
# a client generated from Porch's proto by another toolchain. Idempotent: an existing venv
# with both packages is kept. Prints the venv's python.
set -euo pipefail
venv="${PORCH_GRPC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/porch-rs/grpc-venv}"
if ! "$venv/bin/python" -c 'import grpc, grpc_tools, grpc_health' >/dev/null 2>&1; then
  mkdir -p "$(dirname "$venv")"
  # Concurrent callers (parallel tests) serialize on a lock; the second finds it ready.
  exec 9>"$venv.lock"
  flock 9
  if ! "$venv/bin/python" -c 'import grpc, grpc_tools, grpc_health' >/dev/null 2>&1; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check grpcio grpcio-tools grpcio-health-checking >&2
  fi
fi
echo "$venv/bin/python"
