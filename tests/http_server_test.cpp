// The metrics/health server of `ruleplane controller`: a client that stalls
// (half a request, or an answer it does not read) cannot hold up /healthz,
// and a client that goes away mid-answer cannot kill the process (SIGPIPE).
// The server runs in the test's own process: if a write raised SIGPIPE, the
// test binary would die.
#include "platform/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "platform/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_pki.h"

namespace ruleplane {
namespace {

using testing::TestPki;

constexpr size_t kBigBody = 32 << 20;  // far more than the socket buffers hold

HttpAnswer Answer(const std::string& path) {
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  if (path == "/big") return {200, "text/plain", std::string(kBigBody, 'b')};
  return {404, "text/plain", "not found\n"};
}

// A connected client socket whose reads and writes give up after `timeout`,
// so that a server that never answers fails the test instead of hanging it.
int Connect(int port, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval limit{static_cast<time_t>(timeout.count() / 1000),
                static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& text) {
  return send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// Everything the server sends until it closes (or the read times out).
std::string ReadAll(int fd) {
  std::string text;
  char buffer[65536];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(got));
  return text;
}

// The whole response to a GET, "" when none came within the client's 20 s.
std::string Get(int port, const std::string& path) {
  const int fd = Connect(port);
  std::string response;
  if (fd >= 0 && SendAll(fd, "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n")) response = ReadAll(fd);
  if (fd >= 0) close(fd);
  return response;
}

// /healthz answered within the 20 s the client waits. The other client of each
// test that calls it holds the server far longer if it waited (a minute's
// read timeout, a slow reply blocked until /healthz answered, a client gone
// for good), so a server that waited for it fails here; the margin is wide
// enough for a sanitizer build beside other tests.
void ExpectHealthz(int port) {
  const std::string healthz = Get(port, "/healthz");
  EXPECT_EQ(healthz.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "/healthz waited for another client";
}

// What poll() reports on `fd` within `limit`: 0 when nothing happened.
short PollFor(int fd, short events, std::chrono::milliseconds limit) {
  pollfd watched{fd, events, 0};
  if (poll(&watched, 1, static_cast<int>(limit.count())) <= 0) return 0;
  return watched.revents;
}

constexpr short kHungUp = POLLERR | POLLHUP | POLLRDHUP;

// Waits (a minute at most) for the server to drop `fd` and says whether it
// reset it: the state of the socket, not the clock, shows the server gave up.
bool ResetByServer(int fd) {
  if ((PollFor(fd, kHungUp, std::chrono::minutes(1)) & (POLLERR | POLLHUP)) == 0) return false;
  int error = 0;
  socklen_t length = sizeof error;
  return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == ECONNRESET;
}

TEST(HttpServer, AClientSendingHalfARequestDoesNotHoldUpHealthz) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::minutes(1);
  auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();
  const int silent = Connect(port);
  ASSERT_GE(silent, 0);
  ASSERT_TRUE(SendAll(silent, "GET /heal"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server has read it and waits for more
  ExpectHealthz(port);
  ExpectHealthz(port);
  close(silent);
}

TEST(HttpServer, AClientThatSendsNothingIsDroppedAtTheReadTimeout) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::milliseconds(300);
  auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int silent = Connect((*server)->port());
  ASSERT_GE(silent, 0);
  ASSERT_TRUE(SendAll(silent, "GET /heal"));
  EXPECT_TRUE(ResetByServer(silent)) << "the server never gave up on half a request";
  close(silent);
}

// /healthz is answered while a client that reads nothing of its large answer
// is still connected (the server has not given up on it yet: its write
// timeout is a minute), so /healthz did not wait for it.
TEST(HttpServer, AClientThatDoesNotReadItsAnswerDoesNotHoldUpHealthz) {
  HttpServerOptions options;
  options.write_timeout = std::chrono::minutes(1);
  auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();
  const int slow = Connect(port);
  ASSERT_GE(slow, 0);
  ASSERT_TRUE(SendAll(slow, "GET /big HTTP/1.1\r\n\r\n"));
  ASSERT_NE(PollFor(slow, POLLIN, std::chrono::seconds(30)) & POLLIN, 0)
      << "the server never started answering";
  const std::string healthz = Get(port, "/healthz");
  EXPECT_EQ(healthz.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "/healthz waited for the slow client";
  EXPECT_EQ(PollFor(slow, kHungUp, std::chrono::milliseconds(0)), 0) << "the slow client was dropped early";
  close(slow);
}

// A client that reads nothing of its answer is reset at the write timeout,
// before it received the whole answer (it received none of it: it read
// nothing). Read from the socket's state, not from the clock.
TEST(HttpServer, AClientThatDoesNotReadItsAnswerIsResetAtTheWriteTimeout) {
  HttpServerOptions options;
  options.write_timeout = std::chrono::milliseconds(500);
  auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int slow = Connect((*server)->port());
  ASSERT_GE(slow, 0);
  ASSERT_TRUE(SendAll(slow, "GET /big HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(ResetByServer(slow)) << "the server never gave up on the slow reader, or kept sending the rest";
  ExpectHealthz((*server)->port());
  close(slow);
}

// A client that goes away while the server writes a large answer: after its
// request it closes its side (the server's socket is then in CLOSE_WAIT), reads
// a little of the answer and closes with the rest unread (RST). The server's
// next write fails with EPIPE, which without MSG_NOSIGNAL raises SIGPIPE and
// ends this process.
TEST(HttpServer, AClientClosingMidAnswerDoesNotKillTheServer) {
  auto server = HttpServer::Start("127.0.0.1:0", Answer);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();
  for (const bool half_close : {true, false, true, false}) {
    const int leaving = Connect(port);
    ASSERT_GE(leaving, 0);
    ASSERT_TRUE(SendAll(leaving, "GET /big HTTP/1.1\r\n\r\n"));
    if (half_close) shutdown(leaving, SHUT_WR);
    char some[1000];
    ASSERT_GT(read(leaving, some, sizeof some), 0) << "the server did not start answering";
    close(leaving);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server writes on
    ExpectHealthz(port);
  }
}

// A server whose /healthz answers at once and whose every other request gets
// a slow reply (`body`), blocked until Release(); WaitStarted() returns once
// one began. `seen` is the slow request as the handler saw it.
class SlowReplyServer {
 public:
  explicit SlowReplyServer(std::string body, HttpServerOptions options = {}) {
    auto handler = [this, body](const HttpRequest& request) -> HttpReply {
      if (request.path == "/healthz") return HttpAnswer{200, "text/plain", "ok\n"};
      seen = request;
      return HttpReply::Slow([this, body, released = released_] {
        started_.set_value();
        released.wait();
        return HttpAnswer{200, "text/plain", body};
      });
    };
    auto server = HttpServer::Start("127.0.0.1:0", HttpServer::RequestHandler(handler), options);
    EXPECT_TRUE(server.ok()) << server.error().message;
    if (server.ok()) server_ = std::move(*server);
  }
  // A test that stopped before Release() still ends: the server waits for its slow reply when it stops.
  ~SlowReplyServer() {
    if (!released_once_) Release();
  }
  bool ok() const { return server_ != nullptr; }
  int port() const { return server_->port(); }
  bool WaitStarted() {
    return started_.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  }
  void Release() {
    released_once_ = true;
    release_.set_value();
  }

  HttpRequest seen;

 private:
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
  std::promise<void> started_;
  bool released_once_ = false;
  std::unique_ptr<HttpServer> server_;  // last: stopped first, while the promises still exist
};

// A slow reply (member-agent's /snapshot/full) is computed on a thread of
// its own: while it is blocked (on a latch this test releases only after
// /healthz answered), /healthz is answered; then the slow one is answered
// too. The request's method and query reach the handler.
TEST(HttpServer, ASlowReplyDoesNotHoldUpHealthz) {
  SlowReplyServer server("{\"slow\":true}");
  ASSERT_TRUE(server.ok());
  const int slow = Connect(server.port());
  ASSERT_GE(slow, 0);
  ASSERT_TRUE(SendAll(slow, "POST /slow?final=true HTTP/1.1\r\nContent-Length: 0\r\n\r\n"));
  ASSERT_TRUE(server.WaitStarted());
  ExpectHealthz(server.port());
  ExpectHealthz(server.port());
  server.Release();
  const std::string answered = ReadAll(slow);
  close(slow);
  EXPECT_EQ(answered.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answered;
  EXPECT_NE(answered.find("{\"slow\":true}"), std::string::npos) << answered;
  EXPECT_EQ(server.seen.method, "POST");
  EXPECT_EQ(server.seen.query, "final=true");
}

// Connections past the limit that send nothing (any pod on the network can
// open them) make room by dropping the oldest such client, never a reply in
// progress (issue 41, low): before, the oldest connection went, and that was
// the slow reply's, whose caller lost the answer to a snapshot it had asked for.
TEST(HttpServer, ConnectionsPastTheLimitNeverDropAReplyInProgress) {
  HttpServerOptions options;
  options.max_connections = 4;
  SlowReplyServer server("slow\n", options);
  ASSERT_TRUE(server.ok());
  const int slow = Connect(server.port());
  ASSERT_GE(slow, 0);
  ASSERT_TRUE(SendAll(slow, "POST /snapshot/full HTTP/1.1\r\nContent-Length: 0\r\n\r\n"));
  ASSERT_TRUE(server.WaitStarted());
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) {
    idle.push_back(Connect(server.port()));
    ASSERT_GE(idle.back(), 0);
  }
  ExpectHealthz(server.port());  // a newcomer still gets in: an idle client made room
  server.Release();
  const std::string answered = ReadAll(slow);
  close(slow);
  for (const int fd : idle) close(fd);
  EXPECT_EQ(answered.rfind("HTTP/1.1 200 OK\r\n", 0), 0u)
      << "the reply in progress was dropped for a newcomer: \"" << answered << "\"";
  EXPECT_NE(answered.find("slow\n"), std::string::npos) << answered;
}

// A path handler (the controller's) answers GETs only, as before.
TEST(HttpServer, APathHandlerRefusesOtherMethods) {
  auto server = HttpServer::Start("127.0.0.1:0", Answer);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int fd = Connect((*server)->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "POST /healthz HTTP/1.1\r\n\r\n"));
  const std::string answered = ReadAll(fd);
  close(fd);
  EXPECT_EQ(answered.rfind("HTTP/1.1 405 ", 0), 0u) << answered;
}

// member-agent's API with etcd-druid's spec.backup.tls (--server-cert,
// --server-key): the same server over HTTPS. A client that verifies against
// the CA gets its answer, also a big one written across many non-blocking
// writes; one that trusts another CA, one that speaks plain HTTP and one that
// stops in the middle of its handshake get nothing and hold up no one.
class HttpsServer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = TestPki::Create(dir_.path() + "/pki");
    ASSERT_TRUE(pki.ok()) << pki.error().message;
    pki_ = *pki;
    HttpServerOptions options;
    options.read_timeout = std::chrono::milliseconds(500);
    options.tls = HttpServerTls{pki_.member_cert, pki_.member_key};
    auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
  }
  std::string Url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  Result<HttpResponse> GetOver(const TlsConfig& tls, const std::string& path) const {
    HttpClient client(tls);
    return client.Send("GET", Url(path), "", std::chrono::seconds(10), {}, {.max_body_bytes = 0});
  }

  testing::TempDir dir_{"https-server"};
  TestPki pki_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpsServer, AClientThatTrustsItsCaIsAnsweredAndNoOtherIs) {
  auto healthz = GetOver(TestPki::Files(pki_.ca_cert), "/healthz");
  ASSERT_TRUE(healthz.ok()) << healthz.error().message;
  EXPECT_EQ(healthz->status, 200);
  EXPECT_EQ(healthz->body, "ok\n");
  auto big = GetOver(TestPki::Files(pki_.ca_cert), "/big");
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(big->body.size(), kBigBody);

  auto foreign = GetOver(TestPki::Files(pki_.other_ca_cert), "/healthz");
  ASSERT_FALSE(foreign.ok()) << "a certificate of another CA was trusted";
  EXPECT_NE(foreign.error().message.find(pki_.other_ca_cert), std::string::npos) << foreign.error().message;

  // A certificate of another host: said so, not blamed on the CA.
  HttpClient elsewhere(TestPki::Files(pki_.ca_cert));
  const std::string port = std::to_string(server_->port());
  elsewhere.set_connect_to({"elsewhere.example:" + port + ":127.0.0.1:" + port});
  auto misnamed =
      elsewhere.Send("GET", "https://elsewhere.example:" + port + "/healthz", "", std::chrono::seconds(10));
  ASSERT_FALSE(misnamed.ok());
  EXPECT_NE(misnamed.error().message.find("the server's certificate is not for the host in the URL"),
            std::string::npos)
      << misnamed.error().message;

  // Plain HTTP to the TLS port: no answer of the application's.
  const std::string plain = Get(server_->port(), "/healthz");
  EXPECT_EQ(plain.find("ok\n"), std::string::npos) << plain;
  auto again = GetOver(TestPki::Files(pki_.ca_cert), "/healthz");
  ASSERT_TRUE(again.ok()) << again.error().message;
}

TEST_F(HttpsServer, AClientStuckInItsHandshakeHoldsUpNoOneAndIsDropped) {
  const int stuck = Connect(server_->port());
  ASSERT_GE(stuck, 0);
  ASSERT_TRUE(SendAll(stuck, std::string("\x16\x03\x01\x02\x00\x01", 6)));  // the start of a ClientHello
  auto healthz = GetOver(TestPki::Files(pki_.ca_cert), "/healthz");
  ASSERT_TRUE(healthz.ok()) << healthz.error().message;
  EXPECT_EQ(healthz->status, 200);
  EXPECT_TRUE(ResetByServer(stuck)) << "never dropped at the read timeout (500 ms)";
  close(stuck);
}

TEST(HttpServerTls, ACertificateThatCannotServeIsRefusedNamingItsFile) {
  testing::TempDir dir("https-refused");
  auto pki = TestPki::Create(dir.path() + "/pki");
  ASSERT_TRUE(pki.ok()) << pki.error().message;
  struct Case {
    HttpServerTls tls;
    std::string expected;
  };
  for (const Case& refused : {
           Case{{pki->expired_client_cert, pki->client_key},
                "server certificate " + pki->expired_client_cert + " expired on"},
           Case{{pki->member_cert, pki->client_key}, "server key " + pki->client_key + " is not the key of"},
           Case{{dir.path() + "/missing.crt", pki->member_key}, dir.path() + "/missing.crt cannot be read"},
       }) {
    HttpServerOptions options;
    options.tls = refused.tls;
    auto server = HttpServer::Start("127.0.0.1:0", Answer, options);
    ASSERT_FALSE(server.ok()) << refused.expected;
    EXPECT_NE(server.error().message.find(refused.expected), std::string::npos) << server.error().message;
  }
}

// With a client CA, the server asks for a certificate: a request that came
// with one of that CA is client_verified, one without is served unverified
// (the handler decides per path), and an expired one ends the handshake.
TEST(HttpServerTls, AClientCertificateOfTheClientCaIsVerifiedAndNoneIsServedUnverified) {
  testing::TempDir dir("https-client-ca");
  auto pki = TestPki::Create(dir.path() + "/pki");
  ASSERT_TRUE(pki.ok()) << pki.error().message;
  auto verified = [](const HttpRequest& request) -> HttpReply {
    return HttpAnswer{200, "text/plain", request.client_verified ? "verified\n" : "unverified\n"};
  };
  auto start = [&](const std::string& client_ca) {
    HttpServerOptions options;
    options.tls = HttpServerTls{pki->member_cert, pki->member_key, client_ca};
    return HttpServer::Start("127.0.0.1:0", HttpServer::RequestHandler(verified), options);
  };
  auto asking = start(pki->ca_cert);
  ASSERT_TRUE(asking.ok()) << asking.error().message;
  auto send = [&](const HttpServer& server, const TlsConfig& tls) {
    HttpClient client(tls);
    return client.Send("GET", "https://127.0.0.1:" + std::to_string(server.port()) + "/snapshot/full", "",
                       std::chrono::seconds(10));
  };
  auto with_certificate = send(**asking, pki->ClientTls());
  ASSERT_TRUE(with_certificate.ok()) << with_certificate.error().message;
  EXPECT_EQ(with_certificate->body, "verified\n");
  auto without = send(**asking, TestPki::Files(pki->ca_cert));
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_EQ(without->body, "unverified\n");
  auto expired = send(**asking, TestPki::Files(pki->ca_cert, pki->expired_client_cert, pki->client_key));
  EXPECT_FALSE(expired.ok()) << "an expired client certificate was served: " << expired->body;

  // Without a client CA nothing is asked for, and nothing counts as verified.
  auto plain = start("");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  auto unasked = send(**plain, pki->ClientTls());
  ASSERT_TRUE(unasked.ok()) << unasked.error().message;
  EXPECT_EQ(unasked->body, "unverified\n");

  // A client CA file that holds no certificate is refused where the server starts.
  testing::Put(dir.path() + "/empty.crt", "");
  auto refused = start(dir.path() + "/empty.crt");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find(dir.path() + "/empty.crt"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace ruleplane
