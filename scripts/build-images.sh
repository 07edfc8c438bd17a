#!/usr/bin/env bash
# Builds the node's images offline (packages from Debian's registry only), as
# OCI archives that `ctr -n k8s.io images import` takes, into a cache outside
# the repository:
#
#   ${RULEPLANE_IMAGE_CACHE:-/var/cache/ruleplane/images}/pause.tar       localhost/pause:ruleplane
#   ${RULEPLANE_IMAGE_CACHE:-/var/cache/ruleplane/images}/ruleplane.tar   localhost/ruleplane:latest
#
# pause: deploy/image/pause.c, static. ruleplane: Debian bookworm (debootstrap
# --variant=minbase from this machine's Debian mirror) with etcd-server,
# etcd-client and the packages that hold the ruleplane binary's shared
# libraries (found with ldd), and the binary at /usr/local/bin/ruleplane. Each
# archive is rebuilt only when its inputs change (their hash is kept beside
# it); the Debian root is cached by its package list. Cold: 1-2 minutes and
# about 400 MB of disk; warm: at once. Prints the cache directory on its last
# line.
#
#   bash scripts/build-images.sh [RULEPLANE_BINARY]   # as root (debootstrap); default build/release/ruleplane
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-build/release/ruleplane}")
[ -x "$binary" ] || { echo "build-images: no ruleplane binary at $binary (bash scripts/build.sh binary)" >&2; exit 2; }
cache=${RULEPLANE_IMAGE_CACHE:-/var/cache/ruleplane/images}
suite=bookworm

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
missing=()
for p in debootstrap python3 gcc libc6-dev binutils; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  $sudo_cmd apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
$sudo_cmd mkdir -p "$cache"
$sudo_cmd chown "$(id -u):$(id -g)" "$cache"

hash_of() { sha256sum | cut -c1-16; }
# Whether $1 was built from inputs whose hash is $2.
current() { [ -f "$cache/$1" ] && [ "$(cat "$cache/$1.inputs" 2>/dev/null)" = "$2" ]; }
work=$(mktemp -d "$cache/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# pause
inputs=$(cat deploy/image/pause.c scripts/oci-archive.py "$0" <(gcc --version) | hash_of)
if ! current pause.tar "$inputs"; then
  mkdir -p "$work/pause"
  gcc -static -O2 -o "$work/pause/pause" deploy/image/pause.c
  python3 scripts/oci-archive.py "$work/pause" localhost/pause:ruleplane "$cache/pause.tar" --entrypoint /pause
  echo "$inputs" >"$cache/pause.tar.inputs"
fi

# The Debian root: etcd and the ruleplane binary's runtime libraries.
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
packages=$( (echo etcd-server; echo etcd-client
  for library in $libraries; do dpkg -S "$(realpath "$library")" 2>/dev/null || dpkg -S "$library"; done |
    cut -d: -f1) | sort -u | tr '\n' ',' | sed 's/,$//')
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
base_key=$(echo "$suite $mirror $packages" | hash_of)
base="$cache/root-$base_key"
if [ ! -d "$base" ]; then
  debootstrap --variant=minbase --include="$packages" "$suite" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    exit 1
  }
  # The runtime mounts /dev, /proc and /sys, and gives each Pod its hosts and
  # resolv.conf; etcd run by hand needs localhost.
  rm -rf "$work/root"/dev/* "$work/root"/var/cache/apt/archives/*.deb "$work/root"/var/lib/apt/lists/*
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$work/root/etc/hosts"
  rm -rf "$cache"/root-*
  mv "$work/root" "$base"
fi

# ruleplane
inputs=$( (echo "$base_key"; cat "$binary" scripts/oci-archive.py "$0") | hash_of)
if ! current ruleplane.tar "$inputs"; then
  cp -a "$base" "$work/ruleplane"
  rm -rf "$work/ruleplane"/usr/share/{doc,man,info,locale}/*
  # Without its debug information (129 MB down to 6); symbols stay for backtraces.
  install -m 0755 "$binary" "$work/ruleplane/usr/local/bin/ruleplane"
  strip --strip-debug "$work/ruleplane/usr/local/bin/ruleplane"
  python3 scripts/oci-archive.py "$work/ruleplane" localhost/ruleplane:latest "$cache/ruleplane.tar" \
    --entrypoint /usr/local/bin/ruleplane
  echo "$inputs" >"$cache/ruleplane.tar.inputs"
fi
echo "$cache"
