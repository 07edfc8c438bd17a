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
# libclang-rt-dev: clang's libFuzzer and sanitizer runtimes (only recommended by clang).
# The node (scripts/node.sh, label node): containerd, runc, the CNI plugins, dnsmasq for the cluster DNS,
# iptables and conntrack for kube-proxy; debootstrap for the image (scripts/build-images.sh).
everything=(
  clang clang-format libclang-rt-dev libgtest-dev libgmock-dev googletest libbenchmark-dev python3 etcd-server
  etcd-client containerd runc containernetworking-plugins dnsmasq-base iptables conntrack iproute2 procps debootstrap
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
