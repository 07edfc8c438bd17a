// A loopback port that another process took between its choice and its
// bind, made to order: the port is held (bound and listening) while this
// lives, and FreeLoopbackPort answers it at the given picks (counted from 1
// since construction) and the picker it replaced otherwise. A harness that
// starts again on new ports when a bind fails passes; one that trusts its
// first choice does not.
//
//   TakenPort taken({2});  // the second port chosen is taken
//   auto cluster = EtcdCluster::Create(3, dir.path());
//   ASSERT_TRUE(cluster->StartAll().ok());
//   EXPECT_EQ(taken.handed_out(), 1);
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>

namespace ruleplane::testing {

class TakenPort {
 public:
  explicit TakenPort(std::set<int> picks = {1});
  ~TakenPort();
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;

  int port() const { return port_; }
  int handed_out() const { return state_->handed_out; }  // how often FreeLoopbackPort answered it

 private:
  struct State {
    std::atomic<int> picks{0};
    std::atomic<int> handed_out{0};
  };
  int fd_ = -1;
  int port_ = -1;
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::function<int()> previous_;
};

}  // namespace ruleplane::testing
