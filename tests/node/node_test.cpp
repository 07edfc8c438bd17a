// scripts/node.sh (label `node`): a real node comes up Ready, runs a Pod of
// the ruleplane image through kubelet, containerd and runc, resolves a
// Service's name through the cluster-DNS stand-in and connects to it through
// kube-proxy's rules, runs deploy/'s controller Deployment from the image with
// its real probes, and goes down leaving no
// process, cgroup, mount or namespace behind and the host's iptables and
// kernel settings as they were.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/real_node.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

// What the host looks like where the node must leave no trace.
struct HostState {
  std::string iptables, ip_forward, overcommit, panic, mounts_of_dir;
  bool etc_gardener = false;
};

HostState ReadHost(const std::string& dir) {
  return {RunShell("iptables-save | grep -v '^#'").output,
          Slurp("/proc/sys/net/ipv4/ip_forward"),
          Slurp("/proc/sys/vm/overcommit_memory"),
          Slurp("/proc/sys/kernel/panic"),
          RunShell("grep -F '" + dir + "' /proc/self/mountinfo").output,
          fs::exists("/etc/gardener")};
}

TEST(Node, UpRunsTheImageAndTheShippedControllerAndDownLeavesNothingBehind) {
  TempDir dir("node");
  const HostState before = ReadHost(dir.path());
  const std::string run_netns_before = RunShell("ls /run/netns 2>/dev/null").output;
  auto up = RealNode::Up(dir.path() + "/node", "node-test");
  ASSERT_TRUE(up.ok()) << up.error().message;
  RealNode& node = **up;

  // A Pod of the ruleplane image, and a Service whose name the Pod resolves.
  ShellRun run = node.Kubectl(
      "run probe --image=localhost/ruleplane:latest --image-pull-policy=Never --restart=Never --command -- "
      "sh -c "
      "'/usr/local/bin/ruleplane version && getent hosts kubernetes.default.svc.cluster.local && "
      "timeout 5 bash -c \"echo >/dev/tcp/10.96.0.1/443\" && echo service reachable'");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(Eventually(
      [&] { return node.Kubectl("get pod probe -o jsonpath={.status.phase}").output == "Succeeded"; },
      std::chrono::seconds(60)))
      << node.Kubectl("describe pod probe").output;
  run = node.Kubectl("logs probe");
  EXPECT_TRUE(Contains(run.output, "ruleplane ")) << run.output;
  EXPECT_TRUE(Contains(run.output, "10.96.0.1")) << "the kubernetes Service by its name\n" << run.output;
  EXPECT_TRUE(Contains(run.output, "service reachable")) << "through kube-proxy's rules\n" << run.output;
  // deploy/ as README tells a user to apply it: both controller replicas
  // Ready through their real probes, one holding the Lease.
  run = node.Kubectl("apply -f " + std::string(SourceDir()) + "/deploy/");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(Eventually(
      [&] {
        return node.Kubectl("get deployment ruleplane-controller -o jsonpath={.status.readyReplicas}")
                   .output == "2";
      },
      std::chrono::seconds(90)))
      << node.Kubectl("describe pods -l app.kubernetes.io/name=ruleplane-controller").output;
  EXPECT_TRUE(Eventually(
      [&] {
        return Contains(
            node.Kubectl("get lease ruleplane-controller -o jsonpath={.spec.holderIdentity}").output,
            "ruleplane-controller-");
      },
      std::chrono::seconds(30)));
  EXPECT_TRUE(Contains(node.Exec("ip route").output, "10.96.0.0/16 dev node0"));
  EXPECT_FALSE(Contains(node.Exec("ip route").output, "default")) << "no route off the machine";

  const std::string node_namespace = node.network_namespace();
  const ShellRun down = node.Down();
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_FALSE(node_namespace.empty());
  EXPECT_EQ(
      RunShell("for p in /proc/[0-9]*; do readlink $p/ns/net; done | grep -cxF '" + node_namespace + "'")
          .output,
      "0\n")
      << "a process left in the node's namespace";
  EXPECT_EQ(RunShell("ls -d /sys/fs/cgroup/*/ruleplane-node-test 2>/dev/null | wc -l").output, "0\n");
  EXPECT_EQ(RunShell("ls /run/netns 2>/dev/null").output, run_netns_before)
      << "a Pod's network namespace is left";
  const HostState after = ReadHost(dir.path());
  EXPECT_EQ(after.iptables, before.iptables);
  EXPECT_EQ(after.ip_forward, before.ip_forward);
  EXPECT_EQ(after.overcommit, before.overcommit);
  EXPECT_EQ(after.panic, before.panic);
  EXPECT_EQ(after.mounts_of_dir, "");
  EXPECT_FALSE(fs::exists("/etc/gardener") && !before.etc_gardener)
      << "the Local backup store left on the host";
}

}  // namespace
}  // namespace ruleplane::testing
