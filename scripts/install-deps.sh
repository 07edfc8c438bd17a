#!/usr/bin/env bash
# Installs the Debian packages ruleplane needs, only those that are missing.
set -euo pipefail
#   bash scripts/install-deps.sh            # everything: build, tests, benchmarks, fuzzing, real etcd
#   bash scripts/install-deps.sh --binary   # only what building the ruleplane binary needs (scripts/run.sh)
binary=(
  build-essential cmake pkg-config
  libyaml-cpp-dev libpcre2-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libsimdjson-dev libsqlite3-dev
  zlib1g-dev
)
# ccache: the compiler cache scripts/build.sh uses for every flavour (kept under /var/cache/ruleplane/ccache).
# libclang-rt-dev: clang's libFuzzer and sanitizer runtimes (only recommended by clang).
# python3-boto3: the independent S3 client the object-store tests (label objectstore) check against.
# The node (scripts/node.sh, label node): containerd, runc, the CNI plugins, dnsmasq for the cluster DNS,
# iptables and conntrack for kube-proxy; debootstrap for the image (scripts/build-images.sh).
# fuse3 and python3-llfuse: a file system whose reads fail with EIO (tests/support/io_error_fs.py), a failing disk.
everything=(
  ccache clang clang-format libclang-rt-dev libgtest-dev libgmock-dev googletest libbenchmark-dev python3 etcd-server
  etcd-client containerd runc containernetworking-plugins dnsmasq-base iptables conntrack iproute2 procps debootstrap
  python3-boto3 fuse3 python3-llfuse
)
packages=("${binary[@]}")
[ "${1:-}" = --binary ] || packages+=("${everything[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The object-store tests' servers (label objectstore): s3rver, in the fork that verifies Signature V4, and Azurite,
# from tests/objectstore/package-lock.json with the machine's node and npm (Node.js 20 or later), installed once
# outside the repository (RULEPLANE_OBJECT_STORES moves it; a changed lock file installs again).
if [ "${1:-}" != --binary ]; then
  stores="${RULEPLANE_OBJECT_STORES:-/var/cache/ruleplane/object-stores}"
  lock="$(cd "$(dirname "$0")/.." && pwd)/tests/objectstore/package-lock.json"
  if ! cmp -s "$lock" "$stores/package-lock.json" || [ ! -f "$stores/node_modules/@20minutes/s3rver/lib/cli.js" ]; then
    command -v npm >/dev/null || { echo "install-deps: npm is needed for the object-store test servers" >&2; exit 1; }
    mkdir -p "$stores"
    cp "$(dirname "$lock")/package.json" "$lock" "$stores/"
    (cd "$stores" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
