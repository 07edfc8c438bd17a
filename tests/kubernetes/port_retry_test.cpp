// The API server's harness chooses ports free and closes them before etcd
// and kube-apiserver bind them (neither takes an inherited socket), and the
// test bed does so for a controller's metrics port: when one was taken in
// between, that process starts again on a new port. The ports
// are taken on purpose here (tests/support/taken_port.h); without the
// retry, the test fails.
#include <gtest/gtest.h>

#include "tests/support/kube_cluster.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/taken_port.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

TEST(PortRetry, AnApiServerWhoseStorageAndSecurePortsWereTakenStartsOnNewPorts) {
  TempDir dir("port-retry-kube");
  // Picks 1 and 2 are its etcd's client and peer ports, 3 and 4 the etcd's
  // second attempt, 5 the API server's secure port, 6 its second attempt,
  // 7 the controller's metrics port.
  TakenPort taken({1, 5, 7});
  auto kube = KubeCluster::Start(dir.path());
  ASSERT_TRUE(kube.ok()) << kube.error().message;
  EXPECT_EQ(taken.handed_out(), 2);
  EXPECT_TRUE(Contains(Slurp(dir.path() + "/etcd.log"), "address already in use"))
      << "its etcd could not bind at first";
  EXPECT_TRUE(Contains(Slurp(dir.path() + "/kube-apiserver.log"), "address already in use"))
      << "the API server could not bind at first";
  EXPECT_FALSE(Contains((*kube)->server(), ":" + std::to_string(taken.port())));
  KubeClient admin((*kube)->AdminConfig());
  RequestLog log;
  EXPECT_TRUE(admin.Get({"v1", "namespaces", "", "default", ""}, log).ok());

  // The test bed's controller, whose metrics port was taken too.
  ASSERT_TRUE(InstallEtcdCrd(admin, log).ok());
  auto controller = StartControllerProcess(**kube, dir.path(),
                                           {.flags = {"--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  EXPECT_EQ(taken.handed_out(), 3);
  EXPECT_TRUE(controller->process.running()) << Slurp(controller->log);
  EXPECT_NE(controller->metrics_port, taken.port());
  EXPECT_TRUE(Contains(Slurp(controller->log), "ddress already in use"))
      << "the controller could not listen at first: " << Slurp(controller->log);
}

}  // namespace
}  // namespace ruleplane::testing
