#include "tests/support/real_node.h"
#include "tests/support/source_paths.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ruleplane::testing {
namespace {

const std::string kNodeScript = std::string(SourceDir()) + "/scripts/node.sh";

// `text` quoted for sh.
std::string Quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

Status Errno(const std::string& what) {
  return Error{ErrorCode::kInternal, what + ": " + std::strerror(errno), {}};
}

}  // namespace

Result<std::unique_ptr<RealNode>> RealNode::Up(const std::string& dir, const std::string& name) {
  std::unique_ptr<RealNode> node(new RealNode());
  node->dir_ = dir;
  node->name_ = name;
  const ShellRun up = RunShell("bash " + kNodeScript + " up " + Quoted(dir) + " " + Quoted(name));
  if (up.exit_code != 0)
    return Error{ErrorCode::kUnavailable,
                 "node.sh up failed:\n" + up.output + RunShell("tail -n 20 " + dir + "/logs/*.log").output,
                 {}};
  const std::string holder = Slurp(dir + "/holder.pid");
  node->network_namespace_ =
      RunShell("readlink /proc/" + holder.substr(0, holder.find('\n')) + "/ns/net").output;
  if (!node->network_namespace_.empty() && node->network_namespace_.back() == '\n')
    node->network_namespace_.pop_back();
  return node;
}

RealNode::~RealNode() { Down(); }

ShellRun RealNode::Exec(const std::string& command) const {
  return RunShell("bash " + kNodeScript + " exec " + Quoted(dir_) + " sh -c " + Quoted(command));
}

Status RealNode::EnterNetwork() {
  if (host_network_fd_ >= 0) return {};
  const std::string holder = Slurp(dir_ + "/holder.pid");
  const std::string path = "/proc/" + holder.substr(0, holder.find('\n')) + "/ns/net";
  const int node_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (node_fd < 0) return Errno(path);
  host_network_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host_network_fd_ < 0 || setns(node_fd, CLONE_NEWNET) != 0) {
    Status failed = Errno("entering " + path);
    close(node_fd);
    LeaveNetwork();
    return failed;
  }
  close(node_fd);
  return {};
}

Status RealNode::LeaveNetwork() {
  if (host_network_fd_ < 0) return {};
  Status left = setns(host_network_fd_, CLONE_NEWNET) == 0 ? Status() : Errno("back to the host's network");
  close(host_network_fd_);
  host_network_fd_ = -1;
  return left;
}

Result<KubeConfig> RealNode::AdminConfig() const { return LoadKubeconfig(dir_ + "/admin.kubeconfig", ""); }

std::string RealNode::VolumeDir(const std::string& claim, const std::string& ns) const {
  return dir_ + "/volumes/" + ns + "-" + claim;
}

int64_t RealNode::MemoryKiB() const {
  const ShellRun sum = RunShell(
      "total=0; for p in /proc/[0-9]*; do "
      "if [ \"$(readlink $p/ns/net 2>/dev/null)\" = '" +
      network_namespace_ + "' ] || grep -qs ':/ruleplane-" + name_ +
      "\\(/\\|$\\)' $p/cgroup; then "
      "rss=$(awk '/^VmRSS/ {print $2}' $p/status 2>/dev/null); total=$((total + ${rss:-0})); fi; done; "
      "echo $total");
  return sum.exit_code == 0 ? std::atoll(sum.output.c_str()) : -1;
}

ShellRun RealNode::Down() {
  // node.sh down never kills in its caller's own namespace: it must run from the host's.
  LeaveNetwork();
  return RunShell("bash " + kNodeScript + " down " + Quoted(dir_));
}

}  // namespace ruleplane::testing
