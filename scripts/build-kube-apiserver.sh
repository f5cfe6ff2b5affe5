#!/usr/bin/env bash
# Build kube-apiserver v1.20.2 (linux/amd64, static) from Debian bookworm's `kubernetes` source
# package with Debian's Go 1.19, the way ../shared/bin/kube-apiserver-v1.20.2-linux-amd64.xz was made.
# Usage: scripts/build-kube-apiserver.sh OUTPUT_PATH
# Needs apt (root, or sudo), network access, about 4 GB of RAM and 10-15 minutes on 2 cores.
# Normally called by `python -m tests.support.apiserver_binary` when the prebuilt .xz is absent.
# Leaves nothing behind but OUTPUT_PATH: the Debian packages it installs for the build (Go and
# friends, those not installed before) are purged again, the deb-src list and the source,
# GOPATH and Go cache removed. Each step is logged with the time since the start.
set -euo pipefail

SRC_VERSION="1.20.5+really1.20.2-1.1+deb12u1"
SRC_DIR_NAME="kubernetes-1.20.5+really1.20.2"
# The reference binary was built in /tmp/debsrc with this build date; using the same path and
# SOURCE_DATE_EPOCH gives the best chance of a byte-identical result (not guaranteed).
REF_PARENT="/tmp/debsrc"
REF_BUILD_DATE="2026-11-29T08:54:26Z"

STARTED=$SECONDS
log() { echo "[build-kube-apiserver] +$(((SECONDS - STARTED) / 60))m$(((SECONDS - STARTED) % 60))s $*" >&2; }
BUILD_PACKAGES=(golang-go rsync make dpkg-dev xz-utils golang-github-modern-go-reflect2-dev)

out=$(realpath -m "${1:?usage: $0 OUTPUT_PATH}")
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { log "need root or sudo for apt-get"; exit 1; }
  sudo="sudo"
fi

# Where to unpack the source: the reference path when it is free, else a private temp dir.
if [ ! -e "$REF_PARENT" ]; then
  parent="$REF_PARENT"
  mkdir -p "$parent"
else
  parent=$(mktemp -d)
  log "$REF_PARENT already exists; building in $parent (the result will not be byte-identical)"
fi
scratch=$(mktemp -d)
SRC_LIST=/etc/apt/sources.list.d/workload-map-bookworm-src.sources
added=()  # build packages this run installed (purged again by cleanup)
for pkg in "${BUILD_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || added+=("$pkg")
done
cleanup() {
  log "cleanup: removing the source tree $parent and the Go cache $scratch"
  rm -rf "$parent" "$scratch"
  # Leave nothing behind on the system: the deb-src list and the packages were for this build only.
  if [ "${#added[@]}" -gt 0 ]; then
    log "cleanup: purging the build packages this run installed: ${added[*]} (and what only they needed)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq --autoremove "${added[@]}" >/dev/null 2>&1 \
      || log "cleanup: could not purge ${added[*]}; remove them with: apt-get purge --autoremove ${added[*]}"
  fi
  if [ -e "$SRC_LIST" ]; then
    log "cleanup: removing $SRC_LIST"
    $sudo rm -f "$SRC_LIST"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

log "1/5 enabling bookworm deb-src in apt"
$sudo tee "$SRC_LIST" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
$sudo apt-get update -qq

if [ "${#added[@]}" -gt 0 ]; then
  log "2/5 installing build tools system-wide with apt-get (purged again when the build ends): ${added[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${added[@]}" >/dev/null
else
  log "2/5 build tools already installed (they stay): ${BUILD_PACKAGES[*]}"
fi
log "    using $(go version)"

log "3/5 fetching source package kubernetes=$SRC_VERSION into $parent"
cd "$parent"
apt-get source -qq "kubernetes=$SRC_VERSION"
cd "$SRC_DIR_NAME"

log "4/5 swapping vendored modern-go/reflect2 v1.0.1 for Debian's v1.0.2"
# v1.0.1 reads Go runtime map internals that changed in Go 1.18: the server dies with
# "fatal error: fault" in mapiternext. v1.0.2 is the upstream fix.
vendored=vendor/github.com/modern-go/reflect2
rm -rf "$vendored"
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$vendored"
rm -f "$vendored/go.mod"
find "$vendored" -name '*_test.go' -delete
sed -i 's#modern-go/reflect2 v1.0.1#modern-go/reflect2 v1.0.2#g' vendor/modules.txt go.mod

log "5/5 compiling cmd/kube-apiserver (CGO off; this is the slow part, 10-15 minutes on 2 cores)"
mkdir -p .go/src/k8s.io
ln -sfn ../../.. .go/src/k8s.io/kubernetes
SOURCE_DATE_EPOCH=$(date -u -d "$REF_BUILD_DATE" +%s) \
  GOPATH="$PWD/.go" CGO_ENABLED=0 HOME="$scratch/home" GOCACHE="$scratch/gocache" \
  make WHAT=cmd/kube-apiserver &
compile=$!
# The Go compiler is silent for minutes at a time: say that it is still working.
while kill -0 "$compile" 2>/dev/null; do
  sleep 30 & wait $! || true
  kill -0 "$compile" 2>/dev/null && log "    still compiling"
done
wait "$compile"

mkdir -p "$(dirname "$out")"
cp _output/bin/kube-apiserver "$out"
chmod 755 "$out"
log "done: $out ($(sha256sum "$out" | cut -d' ' -f1))"
