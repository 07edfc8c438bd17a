// HostileHttpServer: a loopback HTTP server for tests that answers as a
// hostile or broken etcd or API server would: an endless body, a slow drip,
// an oversized answer, malformed JSON, headers that never end, a stream line
// without its newline. Each request is answered as the handler says (by
// method and path), one thread a connection; the server counts the bytes it
// sent, so that a test can say the client stopped before N bytes.
//
// "Endless" has a safety cap (Answer::cap_bytes, 256 MiB by default): past
// it the server keeps the connection open and sends nothing more, so that a
// client without bounds fails its test (on its timeout, with the bytes
// counted) instead of exhausting the machine.
//
//   auto server = HostileHttpServer::Start([](const std::string& method, const std::string& path) {
//     return HostileHttpServer::Endless(R"({"members":[)", R"({"ID":"1"},)");
//   });
//   EtcdClient client({{(*server)->url()}});
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.h"
#include "tests/support/loopback_listener.h"

namespace ruleplane::testing {

class HostileHttpServer {
 public:
  struct Answer {
    long status = 200;
    std::string prefix;  // the body's first bytes
    std::string filler;  // then this, repeated ("" = nothing more)
    // The body's length, announced as Content-Length; -1 = none (the body
    // ends when the connection does, or never).
    int64_t content_length = -1;
    uint64_t body_bytes = 0;  // prefix and filler sent up to this many bytes; 0 = endless (up to the cap)
    std::chrono::milliseconds interval{0};  // between pieces of `piece_bytes` (a drip)
    size_t piece_bytes = 64 * 1024;
    bool endless_headers = false;  // a header line after another, never the blank line
    uint64_t cap_bytes = 256ull * 1024 * 1024;
  };
  using Handler = std::function<Answer(const std::string& method, const std::string& path)>;

  // A whole answer with this body (malformed JSON, a normal answer).
  static Answer Fixed(long status, std::string body);
  // `prefix` then `filler` repeated without end.
  static Answer Endless(std::string prefix, std::string filler);
  // `prefix` then `filler` repeated, `bytes` per `interval`, without end.
  static Answer Drip(std::string prefix, std::string filler, size_t bytes,
                     std::chrono::milliseconds interval);

  static Result<std::unique_ptr<HostileHttpServer>> Start(Handler handler);
  ~HostileHttpServer();  // stops, ends every answer in progress

  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_->port()); }
  uint64_t bytes_sent() const { return bytes_sent_; }  // every byte of every answer, headers included
  int requests() const { return requests_; }

 private:
  HostileHttpServer() = default;
  void Serve(int connection);
  bool Send(int connection, std::string_view data);  // waits while the client reads nothing; false once gone

  Handler handler_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<int> requests_{0};
  std::unique_ptr<LoopbackListener> listener_;  // last: its connections use the members above
};

}  // namespace ruleplane::testing
