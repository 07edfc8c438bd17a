// What tests share to wait, read and write files, read JSON objects and
// bind users to Roles; one definition each, for every test executable.
//
//   ASSERT_TRUE(Eventually([&] { return Contains(Slurp(log), "ready"); }, std::chrono::seconds(30)));
//   EXPECT_EQ(Text(pod, {"status", "phase"}), "Running");
//   ApplyManifests(admin, {RoleBinding("operator", "ruleplane")}, "default", log);
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "engine/common/json_value.h"

namespace ruleplane::testing {

// Until `done` holds or `timeout` passes; polls every `period`.
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds period = std::chrono::milliseconds(200)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(period);
  }
  return done();
}

struct ShellRun {
  int exit_code;
  std::string output;  // standard output and error together
};

// `command`, run by /bin/sh.
inline ShellRun RunShell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "cannot run: " + command};
  std::string output;
  char buffer[4096];
  for (size_t read; (read = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, read);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The file's bytes; "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `content` to `path`, creating its directory.
inline void Put(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `text` parsed; a failed expectation (and null) when it is not JSON.
inline Value Json(const std::string& text) {
  auto value = ParseJson(text);
  EXPECT_TRUE(value.ok()) << text;
  return value.ok() ? *value : Value::Null();
}

// The value at `keys` in `object` as text: a string as it is, an integer in
// decimal, anything else as JSON; "" when absent.
inline std::string Text(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = ValueAt(object, keys);
  if (at == nullptr) return "";
  if (at->is_string()) return at->string_value();
  if (at->is_int()) return std::to_string(at->int_value());
  return FormatJson(*at);
}

// The string at `keys` in `object`; "" when absent or not a string.
inline std::string TextAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

// A RoleBinding "<binding>" (default "ruleplane-<user>") of the namespaced
// Role `role` to the token user `user`.
inline Value RoleBinding(const std::string& user, const std::string& role, std::string binding = "") {
  if (binding.empty()) binding = "ruleplane-" + user;
  return Json(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":")" +
              binding + R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":")" +
              role + R"("},"subjects":[{"kind":"User","name":")" + user + R"("}]})");
}

}  // namespace ruleplane::testing
