#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager v1.20.2 from Debian's
# `kubernetes` source package (Debian ships no server binary), once per
# machine, into a cache outside the repository:
#
#   ${RULEPLANE_KUBE_CACHE:-/var/cache/ruleplane/kubernetes}/bin/{kube-apiserver,kube-controller-manager}
#
# With --node, also what a real node runs (../shared/COMPONENTS.md, "A real
# node"): kubelet, kube-scheduler and kube-proxy from the same tree, and
# kubectl 1.20.2 from Debian's kubernetes-client package (unpacked, not
# installed, so that another kubectl on the machine stays as it is).
#
# Cold, with --node, on 2 idle cores: 9 min 18 s, 1,003 CPU-seconds, 0.8 GiB
# of memory at most (13 min 30 s, 1,482 CPU-seconds and 1.4 GiB before the
# providerless and dockerless tags below); a second run finds the binaries and
# returns at once. Steps and pitfalls:
# ../shared/COMPONENTS.md. Prints the bin directory on its last line.
set -euo pipefail
cache=${RULEPLANE_KUBE_CACHE:-/var/cache/ruleplane/kubernetes}
bin="$cache/bin"
wanted=(kube-apiserver kube-controller-manager)
[ "${1:-}" = --node ] && wanted+=(kubelet kube-scheduler kube-proxy kubectl)
missing_binaries=()
for binary in "${wanted[@]}"; do
  [ -x "$bin/$binary" ] || missing_binaries+=("$binary")
done
if ((${#missing_binaries[@]} == 0)); then
  echo "$bin"
  exit 0
fi

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
# Source packages need deb-src entries beside the deb ones.
if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
    $sudo_cmd tee /etc/apt/sources.list.d/ruleplane-deb-src.sources >/dev/null
  $sudo_cmd apt-get update
fi
# rsync: without it the first code generator is written as an empty file.
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends \
  dpkg-dev golang-go rsync jq openssl golang-github-modern-go-reflect2-dev >/dev/null

$sudo_cmd mkdir -p "$cache"
$sudo_cmd chown "$(id -u):$(id -g)" "$cache"
cd "$cache"
tree=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
if [ -z "$tree" ]; then
  apt-get source --download-only kubernetes >/dev/null
  dpkg-source --no-check -x kubernetes_*.dsc >/dev/null
  tree=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
fi
cd "$tree"
# The vendored reflect2 1.0.1 crashes under Go >= 1.18 on the first request
# that encodes a map; Debian's 1.0.2 does not.
rm -f vendor/github.com/modern-go/reflect2/*.go vendor/github.com/modern-go/reflect2/*.s
cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s \
  vendor/github.com/modern-go/reflect2/
targets=()
for binary in "${missing_binaries[@]}"; do
  [ "$binary" = kubectl ] || targets+=("cmd/$binary")
done
# providerless and dockerless leave out the in-tree cloud providers and the Docker shim, which nothing here
# runs (the node runs containerd): 42% less Go source to compile for the five binaries (`go list -deps`).
if ((${#targets[@]})); then
  GOPROXY=off GOFLAGS="-mod=vendor -tags=providerless,dockerless" make WHAT="${targets[*]}" >"$cache/build.log" 2>&1 || {
    tail -n 30 "$cache/build.log" >&2
    exit 1
  }
fi
mkdir -p "$bin"
# make recreates the _output/bin link while it runs; the files are here.
for target in "${targets[@]}"; do
  cp "_output/local/bin/linux/amd64/${target#cmd/}" "$bin/"
done
if [[ " ${missing_binaries[*]} " == *" kubectl "* ]]; then
  download=$(mktemp -d)
  (cd "$download" && apt-get download kubernetes-client >/dev/null && dpkg-deb -x kubernetes-client_*.deb root)
  cp "$download/root/usr/bin/kubectl" "$bin/kubectl"
  rm -rf "$download"
fi
echo "$bin"
