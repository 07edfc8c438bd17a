#!/usr/bin/env bash
# A real single-node Kubernetes 1.20.2, offline, inside a private network and
# mount namespace that this script creates (../shared/COMPONENTS.md, "A real
# node"): etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd with runc and the CNI bridge, kubelet, kube-proxy, a cluster-DNS
# stand-in (dnsmasq fed from the Services and Endpoints) and a volume
# provisioner stand-in (a hostPath PV for each pending claim).
#
#   bash scripts/node.sh up DIR [NAME]   # Ready, images imported; prints DIR
#   bash scripts/node.sh exec DIR CMD... # CMD inside the node's namespaces, KUBECONFIG set
#   bash scripts/node.sh down DIR        # stops everything; leaves nothing behind
#
# Network rule: the namespace has no route off the machine (only loopback, a
# dummy interface with the node's address and the Pods' bridge), and kubelet
# runs with AWS_EC2_METADATA_DISABLED=true. Host kernel settings, host iptables
# and the host's ip_forward are not touched: kubelet's sysctl writes land on
# files bound over them inside the mount namespace, iptables and ip_forward
# are the namespace's own. Every process is recorded by PID in DIR/pids and
# stopped by it; the node's cgroups are removed on the way down.
#
# Binaries: $RULEPLANE_KUBE_BIN (scripts/build-kubernetes.sh --node), images:
# $RULEPLANE_IMAGES (scripts/build-images.sh). Run as root.
set -euo pipefail

node_ip=10.99.0.2
pod_subnet=10.244.0.0/24
service_range=10.96.0.0/16

usage() {
  echo "usage: $0 up DIR [NAME] | exec DIR CMD... | down DIR" >&2
  exit 2
}

# Runs "$@" inside the node's network and mount namespaces.
in_node() {
  nsenter -t "$(cat "$dir/holder.pid")" --net --mount -- "$@"
}

# Starts "$@" inside the node in the background, its PID in pids/NAME.pid and
# its output in logs/NAME.log.
start() {
  local component=$1
  shift
  # nsenter, then env, exec the component: the PID is the component's.
  nsenter -t "$(cat "$dir/holder.pid")" --net --mount -- "$@" >"$dir/logs/$component.log" 2>&1 &
  echo $! >"$dir/pids/$component.pid"
}

# Waits until "$@" succeeds, at most $1 seconds.
wait_for() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "node: timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.2
  done
}

kubectl_in_node() {
  in_node env KUBECONFIG="$dir/admin.kubeconfig" "$bin/kubectl" "$@"
}

# The cgroup v1 hierarchies the node's cgroup root is made in.
hierarchies() {
  for hierarchy in /sys/fs/cgroup/*/; do
    [ -f "$hierarchy/cgroup.procs" ] && [ "$hierarchy" != /sys/fs/cgroup/unified/ ] && echo "${hierarchy%/}"
  done
}

up() {
  mkdir -p "$dir"/{pids,logs,certs,etcd,containerd,cni/net.d,cni/ipam,kubelet/root,kubelet/pki,volumes,dns,sysctl}
  echo "$name" >"$dir/name"
  # The holder keeps the namespaces alive; everything else joins them.
  unshare --net --mount --propagation private --fork -- sleep infinity </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/pids/holder.pid"
  # unshare's child (the sleep) is the process in the namespaces.
  wait_for 5 pgrep -P "$(cat "$dir/pids/holder.pid")"
  pgrep -P "$(cat "$dir/pids/holder.pid")" >"$dir/holder.pid"

  # Paths the runtime hard-codes (the Pods' pinned namespaces in /run/netns too), private to this node.
  for path in /run/containerd /run/netns /var/lib/cni /var/log/pods /var/log/containers; do
    mkdir -p "$path"
    in_node mount -t tmpfs tmpfs "$path"
  done
  # etcd-druid's Local backup provider keeps backups under the node's
  # /etc/gardener/local-backupbuckets: here /etc is an overlay whose writes
  # stay in the node's directory, and that one is $dir/backupbuckets.
  mkdir -p "$dir"/etc/{upper,work} "$dir/backupbuckets"
  in_node mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/etc/upper,workdir=$dir/etc/work" /etc
  in_node mkdir -p /etc/gardener/local-backupbuckets
  in_node mount --bind "$dir/backupbuckets" /etc/gardener/local-backupbuckets
  echo 1 >"$dir/sysctl/overcommit_memory"
  echo 10 >"$dir/sysctl/panic"
  echo 1 >"$dir/sysctl/panic_on_oops"
  in_node mount --bind "$dir/sysctl/overcommit_memory" /proc/sys/vm/overcommit_memory
  in_node mount --bind "$dir/sysctl/panic" /proc/sys/kernel/panic
  in_node mount --bind "$dir/sysctl/panic_on_oops" /proc/sys/kernel/panic_on_oops

  # The network: loopback, the node's address, the Service range; no default route.
  in_node ip link set lo up
  # A veth pair with both ends inside (this kernel has no dummy device).
  in_node ip link add node0 type veth peer name node0-peer
  in_node ip addr add "$node_ip/24" dev node0
  in_node ip link set node0-peer up
  in_node ip link set node0 up
  in_node ip route add "$service_range" dev node0
  in_node sysctl -qw net.ipv4.ip_forward=1

  # Control plane.
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  echo "$token,admin,admin,system:masters" >"$dir/tokens.csv"
  start etcd etcd --name node --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380
  start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --service-cluster-ip-range="$service_range" --advertise-address="$node_ip" --bind-address=0.0.0.0 \
    --cert-dir="$dir/certs" --token-auth-file="$dir/tokens.csv" --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
    --kubelet-preferred-address-types=InternalIP --allow-privileged=true
  cat >"$dir/admin.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster: {server: "https://$node_ip:6443", certificate-authority: "$dir/certs/apiserver.crt"}
users:
- name: admin
  user: {token: "$token"}
contexts:
- name: node
  context: {cluster: node, user: admin}
current-context: node
EOF
  wait_for 60 kubectl_in_node get --raw /readyz
  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$dir/admin.kubeconfig" \
    --leader-elect=false --port=0 --secure-port=0 --service-account-private-key-file="$dir/sa.key" \
    --root-ca-file="$dir/certs/apiserver.crt" --use-service-account-credentials=false
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$dir/admin.kubeconfig" --leader-elect=false \
    --port=0 --secure-port=0

  # containerd, with the images.
  cat >"$dir/containerd/config.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:ruleplane"
  disable_apparmor = true
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
EOF
  cat >"$dir/cni/net.d/10-ruleplane.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "ruleplane", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_subnet"}]], "dataDir": "$dir/cni/ipam",
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  start containerd containerd --config "$dir/containerd/config.toml"
  wait_for 30 in_node ctr --address "$dir/containerd/containerd.sock" version
  for image in pause ruleplane; do
    in_node ctr --address "$dir/containerd/containerd.sock" -n k8s.io images import "$images/$image.tar" >/dev/null
  done

  # kubelet, in a cgroup root of its own (kubelet does not create it).
  for hierarchy in $(hierarchies); do
    mkdir -p "$hierarchy/ruleplane-$name"
    if [ -f "$hierarchy/cpuset.cpus" ]; then
      cat "$hierarchy/cpuset.cpus" >"$hierarchy/ruleplane-$name/cpuset.cpus"
      cat "$hierarchy/cpuset.mems" >"$hierarchy/ruleplane-$name/cpuset.mems"
    fi
  done
  echo "nameserver $node_ip" >"$dir/resolv.conf"
  cat >"$dir/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /ruleplane-$name
failSwapOn: false
nodeStatusUpdateFrequency: 1s
clusterDNS: [$node_ip]
clusterDomain: cluster.local
resolvConf: $dir/resolv.conf
address: $node_ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%}
EOF
  start kubelet env AWS_EC2_METADATA_DISABLED=true "$bin/kubelet" --config="$dir/kubelet/config.yaml" \
    --kubeconfig="$dir/admin.kubeconfig" --container-runtime=remote \
    --container-runtime-endpoint="unix://$dir/containerd/containerd.sock" --root-dir="$dir/kubelet/root" \
    --cert-dir="$dir/kubelet/pki" --node-ip="$node_ip" --hostname-override="$name" --network-plugin=cni \
    --cni-bin-dir=/usr/lib/cni --cni-conf-dir="$dir/cni/net.d" --pod-infra-container-image=localhost/pause:ruleplane
  start kube-proxy "$bin/kube-proxy" --kubeconfig="$dir/admin.kubeconfig" --proxy-mode=iptables \
    --hostname-override="$name" --bind-address="$node_ip" --cluster-cidr="$pod_subnet" --masquerade-all \
    --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
    --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256

  # Cluster DNS: the names CoreDNS would serve, from the Services and Endpoints, once a second.
  touch "$dir/dns/hosts"
  start dnsmasq dnsmasq --keep-in-foreground --no-resolv --no-hosts --listen-address="$node_ip" \
    --bind-interfaces --local=/cluster.local/ --addn-hosts="$dir/dns/hosts" --pid-file="$dir/dns/dnsmasq.pid" \
    --user=root
  start dns-feed bash "$script" dns-feed "$dir"
  start provisioner bash "$script" provisioner "$dir"

  wait_for 90 kubectl_in_node wait --for=condition=Ready "node/$name" --timeout=1s
  echo "$dir"
}

# Once a second: "IP name" lines for every Service with a cluster IP
# (svc.ns.svc.cluster.local) and every address of an Endpoints object that
# has a hostname (host.svc.ns.svc.cluster.local: a StatefulSet's Pods under
# its headless Service).
dns_feed() {
  local template='{{range .items}}{{if eq .kind "Service"}}{{if and .spec.clusterIP (ne .spec.clusterIP "None")}}{{.spec.clusterIP}} {{.metadata.name}}.{{.metadata.namespace}}.svc.cluster.local
{{end}}{{else}}{{$svc := .metadata.name}}{{$ns := .metadata.namespace}}{{range .subsets}}{{range .addresses}}{{if .hostname}}{{.ip}} {{.hostname}}.{{$svc}}.{{$ns}}.svc.cluster.local
{{end}}{{end}}{{end}}{{end}}{{end}}'
  while true; do
    if KUBECONFIG="$dir/admin.kubeconfig" "$bin/kubectl" get services,endpoints -A -o go-template="$template" \
      >"$dir/dns/hosts.new" 2>/dev/null && ! cmp -s "$dir/dns/hosts.new" "$dir/dns/hosts"; then
      mv "$dir/dns/hosts.new" "$dir/dns/hosts"
      kill -HUP "$(cat "$dir/dns/dnsmasq.pid")" 2>/dev/null || true
    fi
    sleep 1
  done
}

# Once a second: a hostPath PV, bound in advance through its claimRef, for
# each pending claim; the directory stays with the node until it goes down.
provisioner() {
  while true; do
    KUBECONFIG="$dir/admin.kubeconfig" "$bin/kubectl" get pvc -A -o \
      go-template='{{range .items}}{{if not .spec.volumeName}}{{.metadata.namespace}} {{.metadata.name}} {{.metadata.uid}} {{index .spec.resources.requests "storage"}} {{.spec.storageClassName}}{{"\n"}}{{end}}{{end}}' \
      2>/dev/null | while read -r namespace claim uid size class; do
      [ "$class" = "<no value>" ] && class=""
      mkdir -p "$dir/volumes/$namespace-$claim"
      KUBECONFIG="$dir/admin.kubeconfig" "$bin/kubectl" apply -f - >/dev/null 2>&1 <<EOF || true
apiVersion: v1
kind: PersistentVolume
metadata: {name: "pv-$uid"}
spec:
  capacity: {storage: "$size"}
  accessModes: [ReadWriteOnce]
  storageClassName: "$class"
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: "$dir/volumes/$namespace-$claim"}
  claimRef: {namespace: "$namespace", name: "$claim", uid: "$uid"}
EOF
    done
    sleep 1
  done
}

down() {
  [ -f "$dir/name" ] || return 0
  name=$(cat "$dir/name")
  local holder pid
  holder=$(cat "$dir/holder.pid" 2>/dev/null || true)
  # kubelet first (it would start containers again), then every process in
  # the node's cgroups (the Pods' containers) and every process in the
  # node's network namespace (the components, the shims, the holder), again
  # until none is left: one that was starting a container or forking during
  # a pass is caught by the next, and "down" returns once they are gone.
  [ -f "$dir/pids/kubelet.pid" ] && kill -KILL "$(cat "$dir/pids/kubelet.pid")" 2>/dev/null || true
  local namespace=none
  if [ -n "$holder" ] && [ -e "/proc/$holder" ]; then
    namespace=$(readlink "/proc/$holder/ns/net" || true)
    # Never the host's namespace: only a namespace of the node's own.
    [ -n "$namespace" ] && [ "$namespace" != "$(readlink /proc/self/ns/net)" ] || namespace=none
  fi
  local deadline=$((SECONDS + 20)) left
  while true; do
    left=0
    for hierarchy in $(hierarchies) /sys/fs/cgroup/unified; do
      [ -d "$hierarchy/ruleplane-$name" ] || continue
      for pid in $(find "$hierarchy/ruleplane-$name" -name cgroup.procs -exec cat {} + 2>/dev/null); do
        # A zombie is gone already; nobody may be left to reap it.
        [ "$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null)" = Z ] && continue
        kill -KILL "$pid" 2>/dev/null && left=1
      done
    done
    for pid in /proc/[0-9]*; do
      pid=${pid#/proc/}
      # A process that has exited (a zombie) has no namespace to read.
      if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$namespace" ]; then
        kill -KILL "$pid" 2>/dev/null || true
        left=1
      fi
    done
    ((left)) || break
    if ((SECONDS > deadline)); then
      echo "node: processes are left in the node's cgroups or namespace" >&2
      return 1
    fi
    sleep 0.1
  done
  for pidfile in "$dir"/pids/*.pid; do
    [ -f "$pidfile" ] && kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
  done
  # Also in the (empty) cgroup2 hierarchy, where the runtime makes one too.
  for hierarchy in $(hierarchies) /sys/fs/cgroup/unified; do
    [ -d "$hierarchy/ruleplane-$name" ] || continue
    # Deepest first; a cgroup whose last process is still exiting is retried.
    until find "$hierarchy/ruleplane-$name" -depth -type d -exec rmdir {} + 2>/dev/null; do
      if ((SECONDS > deadline)); then
        echo "node: cannot remove $hierarchy/ruleplane-$name" >&2
        return 1
      fi
      sleep 0.1
    done
  done
  rm -f "$dir"/pids/*.pid "$dir/holder.pid"
}

script=$(realpath "$0")
command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || usage
bin=${RULEPLANE_KUBE_BIN:-/var/cache/ruleplane/kubernetes/bin}
images=${RULEPLANE_IMAGES:-/var/cache/ruleplane/images}
case "$command" in
  up)
    dir=$(realpath -m "$dir")
    name=${3:-node}
    up
    ;;
  exec)
    dir=$(realpath "$dir")
    shift 2
    # In the caller's directory, so that relative paths mean what they say.
    nsenter -t "$(cat "$dir/holder.pid")" --net --mount --wd="$PWD" -- \
      env KUBECONFIG="$dir/admin.kubeconfig" PATH="$bin:$PATH" "$@"
    ;;
  down)
    dir=$(realpath "$dir")
    down
    ;;
  dns-feed) dns_feed ;;
  provisioner) provisioner ;;
  *) usage ;;
esac
