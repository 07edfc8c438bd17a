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

#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

const std::string kNodeScript = std::string(RULEPLANE_SOURCE_DIR) + "/scripts/node.sh";

// What the host looks like where the node must leave no trace.
struct HostState {
  std::string iptables, ip_forward, overcommit, panic, mounts_of_dir;
};

HostState ReadHost(const std::string& dir) {
  return {RunShell("iptables-save | grep -v '^#'").output, Slurp("/proc/sys/net/ipv4/ip_forward"),
          Slurp("/proc/sys/vm/overcommit_memory"), Slurp("/proc/sys/kernel/panic"),
          RunShell("grep -F '" + dir + "' /proc/self/mountinfo").output};
}

TEST(Node, UpRunsTheImageAndTheShippedControllerAndDownLeavesNothingBehind) {
  TempDir dir("node");
  const std::string node = dir.path() + "/node";
  const HostState before = ReadHost(dir.path());
  const std::string exec = "bash " + kNodeScript + " exec " + node + " ";

  // Down even when an assertion ends the test early (down is idempotent).
  struct DownAtTheEnd {
    std::string command;
    ~DownAtTheEnd() { RunShell(command); }
  } down_at_the_end{"bash " + kNodeScript + " down " + node};
  const ShellRun up = RunShell("bash " + kNodeScript + " up " + node + " node-test");
  EXPECT_EQ(up.exit_code, 0) << up.output << RunShell("tail -n 20 " + node + "/logs/*.log").output;
  const std::string holder = Slurp(node + "/holder.pid");
  const std::string node_namespace =
      RunShell("readlink /proc/" + holder.substr(0, holder.find('\n')) + "/ns/net").output;
  if (up.exit_code == 0) {
    // A Pod of the ruleplane image, and a Service whose name the Pod resolves.
    ShellRun run =
        RunShell(exec +
                 "kubectl run probe --image=localhost/ruleplane:latest --image-pull-policy=Never "
                 "--restart=Never --command -- sh -c "
                 "'/usr/local/bin/ruleplane version && getent hosts kubernetes.default.svc.cluster.local && "
                 "timeout 5 bash -c \"echo >/dev/tcp/10.96.0.1/443\" && echo service reachable'");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(Eventually(
        [&] {
          return RunShell(exec + "kubectl get pod probe -o jsonpath={.status.phase}").output == "Succeeded";
        },
        std::chrono::seconds(60)))
        << RunShell(exec + "kubectl describe pod probe").output;
    run = RunShell(exec + "kubectl logs probe");
    EXPECT_TRUE(Contains(run.output, "ruleplane ")) << run.output;
    EXPECT_TRUE(Contains(run.output, "10.96.0.1")) << "the kubernetes Service by its name\n" << run.output;
    EXPECT_TRUE(Contains(run.output, "service reachable")) << "through kube-proxy's rules\n" << run.output;
    // deploy/ as a user applies it, the image named as the node holds it:
    // both controller replicas Ready through their real probes, one holding the Lease.
    const std::string controller = dir.path() + "/controller.yaml";
    ASSERT_EQ(RunShell("sed 's|image: ruleplane:latest|image: localhost/ruleplane:latest\\n          "
                       "imagePullPolicy: Never|' " +
                       std::string(RULEPLANE_SOURCE_DIR) + "/deploy/controller.yaml >" + controller)
                  .exit_code,
              0);
    run = RunShell(exec + "kubectl apply -f " + RULEPLANE_SOURCE_DIR + "/deploy/etcd-crd.yaml -f " +
                   RULEPLANE_SOURCE_DIR + "/deploy/rbac.yaml -f " + controller);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(Eventually(
        [&] {
          return RunShell(exec +
                          "kubectl get deployment ruleplane-controller -o jsonpath={.status.readyReplicas}")
                     .output == "2";
        },
        std::chrono::seconds(90)))
        << RunShell(exec + "kubectl describe pods -l app.kubernetes.io/name=ruleplane-controller").output;
    EXPECT_TRUE(Eventually(
        [&] {
          return Contains(
              RunShell(exec + "kubectl get lease ruleplane-controller -o jsonpath={.spec.holderIdentity}")
                  .output,
              "ruleplane-controller-");
        },
        std::chrono::seconds(30)));
    EXPECT_TRUE(Contains(RunShell(exec + "ip route").output, "10.96.0.0/16 dev node0"));
    EXPECT_FALSE(Contains(RunShell(exec + "ip route").output, "default")) << "no route off the machine";
  }

  const ShellRun down = RunShell("bash " + kNodeScript + " down " + node);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_FALSE(node_namespace.empty());
  EXPECT_EQ(RunShell("for p in /proc/[0-9]*; do readlink $p/ns/net; done | grep -cxF '" +
                     node_namespace.substr(0, node_namespace.find('\n')) + "'")
                .output,
            "0\n")
      << "a process left in the node's namespace";
  EXPECT_EQ(RunShell("ls -d /sys/fs/cgroup/*/ruleplane-node-test 2>/dev/null | wc -l").output, "0\n");
  const HostState after = ReadHost(dir.path());
  EXPECT_EQ(after.iptables, before.iptables);
  EXPECT_EQ(after.ip_forward, before.ip_forward);
  EXPECT_EQ(after.overcommit, before.overcommit);
  EXPECT_EQ(after.panic, before.panic);
  EXPECT_EQ(after.mounts_of_dir, "");
}

}  // namespace
}  // namespace ruleplane::testing
