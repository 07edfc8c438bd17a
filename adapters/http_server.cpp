#include "adapters/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace ruleplane {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return status >= 500 ? "Service Unavailable" : "Error";
  }
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Error{ErrorCode::kInvalidArgument, "\"" + address + "\" is not HOST:PORT", {}};
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  sockaddr_in bind_to{};
  bind_to.sin_family = AF_INET;
  bind_to.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, host.c_str(), &bind_to.sin_addr) != 1) {
    return Error{ErrorCode::kInvalidArgument, "\"" + host + "\" is not an IPv4 address", {}};
  }
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->handler_ = std::move(handler);
  server->listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int yes = 1;
  setsockopt(server->listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (bind(server->listener_, reinterpret_cast<sockaddr*>(&bind_to), sizeof bind_to) != 0 ||
      listen(server->listener_, 16) != 0) {
    return Error{ErrorCode::kIo, "cannot listen on " + address + ": " + std::strerror(errno), {}};
  }
  socklen_t length = sizeof bind_to;
  getsockname(server->listener_, reinterpret_cast<sockaddr*>(&bind_to), &length);
  server->port_ = ntohs(bind_to.sin_port);
  server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
  return server;
}

HttpServer::~HttpServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listener_ >= 0) close(listener_);
}

void HttpServer::Serve() {
  while (!stopping_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 200) <= 0) continue;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
      pollfd readable{connection, POLLIN, 0};
      if (poll(&readable, 1, 2000) <= 0) break;
      const ssize_t got = read(connection, buffer, sizeof buffer);
      if (got <= 0) break;
      request.append(buffer, static_cast<size_t>(got));
    }
    // "GET /path HTTP/1.1"
    const size_t first_space = request.find(' ');
    const size_t second_space = request.find(' ', first_space + 1);
    HttpAnswer answer;
    if (first_space == std::string::npos || second_space == std::string::npos) {
      answer = {400, "text/plain", "bad request\n"};
    } else if (request.compare(0, first_space, "GET") != 0) {
      answer = {405, "text/plain", "only GET\n"};
    } else {
      std::string path = request.substr(first_space + 1, second_space - first_space - 1);
      path = path.substr(0, path.find('?'));
      answer = handler_(path);
    }
    const std::string response = "HTTP/1.1 " + std::to_string(answer.status) + " " + Reason(answer.status) +
                                 "\r\nContent-Type: " + answer.content_type +
                                 "\r\nContent-Length: " + std::to_string(answer.body.size()) +
                                 "\r\nConnection: close\r\n\r\n" + answer.body;
    size_t sent = 0;
    while (sent < response.size()) {
      const ssize_t wrote = write(connection, response.data() + sent, response.size() - sent);
      if (wrote <= 0) break;
      sent += static_cast<size_t>(wrote);
    }
    close(connection);
  }
}

}  // namespace ruleplane
