// HttpClient::Exchange, the form object stores use: a body read in pieces,
// the answer's headers kept, 2xx bodies streamed and error bodies kept.
#include <gtest/gtest.h>

#include <string>

#include "platform/http_client.h"
#include "tests/support/hostile_http_server.h"

namespace ruleplane {
namespace {

using testing::HostileHttpServer;

TEST(HttpExchange, KeepsTheHeadersAndAnErrorBodyInsteadOfStreamingIt) {
  auto server = HostileHttpServer::Start([](const std::string&, const std::string&) {
    return HostileHttpServer::Fixed(404, "<Error><Code>NoSuchKey</Code></Error>");
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  HttpClient client;
  HttpExchange exchange;
  exchange.method = "GET";
  exchange.url = (*server)->url() + "/bucket/key";
  std::string streamed;
  exchange.on_data = [&](std::string_view data) {
    streamed.append(data);
    return true;
  };
  auto response = client.Exchange(exchange);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "<Error><Code>NoSuchKey</Code></Error>");
  EXPECT_EQ(streamed, "");
  EXPECT_EQ(response->Header("content-length"), "37");
}

TEST(HttpExchange, StreamsASuccessfulBody) {
  auto server = HostileHttpServer::Start(
      [](const std::string&, const std::string&) { return HostileHttpServer::Fixed(200, "object bytes"); });
  ASSERT_TRUE(server.ok()) << server.error().message;
  HttpClient client;
  HttpExchange exchange;
  exchange.method = "GET";
  exchange.url = (*server)->url() + "/bucket/key";
  std::string streamed;
  exchange.on_data = [&](std::string_view data) {
    streamed.append(data);
    return true;
  };
  auto response = client.Exchange(exchange);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(streamed, "object bytes");
  EXPECT_EQ(response->body, "");
}

TEST(HttpExchange, ABodySourceThatEndsEarlyIsAnIoError) {
  auto server = HostileHttpServer::Start(
      [](const std::string&, const std::string&) { return HostileHttpServer::Fixed(200, "stored"); });
  ASSERT_TRUE(server.ok()) << server.error().message;
  HttpClient client;
  HttpExchange exchange;
  exchange.method = "PUT";
  exchange.url = (*server)->url() + "/bucket/key";
  exchange.body_size = 100'000;
  int64_t given = 0;
  exchange.read_body = [&](char* buffer, size_t size) -> size_t {
    if (given >= 50'000) return 0;  // the file shrank
    const size_t now = std::min<size_t>(size, 1000);
    std::fill(buffer, buffer + now, 'x');
    given += static_cast<int64_t>(now);
    return now;
  };
  auto response = client.Exchange(exchange);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kIo) << response.error().message;
  EXPECT_NE(response.error().message.find("50000 of 100000"), std::string::npos) << response.error().message;
}

TEST(HttpExchange, AStreamedBodyCutByTheTimeoutIsAnError) {
  auto server = HostileHttpServer::Start([](const std::string&, const std::string&) {
    return HostileHttpServer::Drip("", "x", 10, std::chrono::milliseconds(100));
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  HttpClient client;
  HttpExchange exchange;
  exchange.method = "GET";
  exchange.url = (*server)->url() + "/bucket/key";
  exchange.on_data = [](std::string_view) { return true; };
  exchange.timeout = std::chrono::seconds(1);
  exchange.limits.max_body_bytes = 0;
  auto response = client.Exchange(exchange);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kDeadlineExceeded) << response.error().message;
}

}  // namespace
}  // namespace ruleplane
