#include "adapters/kubernetes/kube_client.h"

#include <sys/stat.h>

#include <curl/curl.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <thread>

#include "engine/common/json_value.h"
#include "platform/file_input.h"
#include "platform/line_splitter.h"

namespace ruleplane {
namespace {

std::string ApiGroup(const std::string& api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

std::string Escape(const std::string& text) {
  char* escaped = curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size()));
  std::string result = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return result;
}

std::string RbacVerb(const std::string& method, const KubeResource& resource) {
  if (method == "GET") return resource.name.empty() ? "list" : "get";
  if (method == "POST") return "create";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return method;
}

// The text of a Status: "reason: message (field: message; ...)".
std::string DescribeStatus(const std::string& body) {
  auto status = ParseJson(body);
  if (!status.ok() || !status->is_map()) return body.substr(0, 300);
  auto text = [](const Value* value) {
    return value != nullptr && value->is_string() ? value->string_value() : "";
  };
  std::string described = text(status->Find("reason"));
  const std::string message = text(status->Find("message"));
  if (!message.empty()) described += (described.empty() ? "" : ": ") + message;
  const Value* details = status->Find("details");
  const Value* causes = details != nullptr && details->is_map() ? details->Find("causes") : nullptr;
  if (causes != nullptr && causes->is_list() && !causes->list_value().empty()) {
    std::string listed;
    for (const Value& cause : causes->list_value()) {
      if (!cause.is_map()) continue;
      listed += (listed.empty() ? "" : "; ") + text(cause.Find("field")) + ": " + text(cause.Find("message"));
    }
    described += " (" + listed + ")";
  }
  return described;
}

}  // namespace

std::string KubeResource::Path() const {
  std::string path =
      api_version.find('/') == std::string::npos ? "/api/" + api_version : "/apis/" + api_version;
  if (!namespace_name.empty()) path += "/namespaces/" + namespace_name;
  if (!plural.empty()) path += "/" + plural;
  if (!name.empty()) path += "/" + name;
  if (!subresource.empty()) path += "/" + subresource;
  return path;
}

Error KubeStatusError(long status, const std::string& verb, const KubeResource& resource,
                      const std::string& body) {
  const std::string what =
      verb + " " + resource.plural + (resource.subresource.empty() ? "" : "/" + resource.subresource) +
      (resource.name.empty() ? "" : " " + resource.name) +
      (resource.namespace_name.empty() ? "" : " in namespace " + resource.namespace_name);
  Error error = HttpStatusError(status, what, "");
  error.message = what + ": HTTP " + std::to_string(status) + " " + DescribeStatus(body);
  if (status == 401)
    error.message += "; the credentials were not accepted: check the token or client certificate";
  if (status == 403) {
    error.message += "; a rule that allows it: {apiGroups: [\"" + ApiGroup(resource.api_version) +
                     "\"], resources: [\"" + resource.plural +
                     (resource.subresource.empty() ? "" : "/" + resource.subresource) + "\"], verbs: [\"" +
                     verb + "\"]}";
  }
  return error;
}

KubeClient::KubeClient(KubeConfig config, std::chrono::milliseconds timeout)
    : config_(std::move(config)), timeout_(timeout), http_(config_.tls) {}

Result<std::string> KubeClient::BearerToken() {
  if (config_.token_file.empty()) return config_.token;
  // Projected service-account tokens rotate (the kubelet swaps a symlink to a
  // new file): read it again when the file behind the name is another one or
  // was rewritten. An mtime alone can repeat within one clock tick.
  struct stat file {};
  if (stat(config_.token_file.c_str(), &file) != 0) {
    return Error{ErrorCode::kIo, "cannot read the token file " + config_.token_file, {}};
  }
  const std::array<int64_t, 5> version = {
      static_cast<int64_t>(file.st_dev), static_cast<int64_t>(file.st_ino),
      static_cast<int64_t>(file.st_mtim.tv_sec), static_cast<int64_t>(file.st_mtim.tv_nsec),
      static_cast<int64_t>(file.st_size)};
  if (cached_token_.empty() || version != token_version_) {
    auto text = ReadRegularFile(config_.token_file, kMaxTokenFileBytes);
    if (!text.ok()) return Error{ErrorCode::kIo, "the token file: " + text.error().message, {}};
    cached_token_ = std::move(*text);
    while (!cached_token_.empty() && std::isspace(static_cast<unsigned char>(cached_token_.back()))) {
      cached_token_.pop_back();
    }
    token_version_ = version;
  }
  return cached_token_;
}

Result<Value> KubeClient::Call(const std::string& method, const KubeResource& resource,
                               const std::string& query, const std::string& body, bool mutates,
                               RequestLog& log, size_t max_answer_bytes) {
  std::string full_query = query;
  if (mutates && server_dry_run_) full_query += std::string(full_query.empty() ? "" : "&") + "dryRun=All";
  const std::string url = config_.server + resource.Path() + (full_query.empty() ? "" : "?" + full_query);
  if (!log.Record(Request{Request::Kind::kHttp, method, url, {}, body, mutates})) return Value::Null();
  auto token = BearerToken();
  if (!token.ok()) return token.error();
  std::vector<std::string> headers = {"Accept: application/json"};
  if (!token->empty()) headers.push_back("Authorization: Bearer " + *token);
  if (method == "PATCH") headers.push_back("Content-Type: application/merge-patch+json");
  // 429: the server says when to come back; a few times, then the caller's backoff.
  for (int attempt = 1;; ++attempt) {
    if (guard_) {
      if (Status allowed = guard_(); !allowed.ok()) return allowed.error();
    }
    const HttpLimits limits{
        .max_body_bytes = max_answer_bytes,
        .name = max_answer_bytes == kKubeListPageBytes ? "an API-server list page" : "an API-server object"};
    auto response = http_.Send(method, url, body, timeout_, headers, limits);
    if (!response.ok()) {
      // Cancelled in flight: say why.
      if (guard_) {
        if (Status allowed = guard_(); !allowed.ok()) return allowed.error();
      }
      return response.error();
    }
    if (response->status >= 200 && response->status < 300) {
      if (response->body.empty()) return Value::Null();
      auto parsed = ParseJson(response->body);
      if (!parsed.ok())
        return Error{ErrorCode::kUnavailable, method + " " + url + ": " + parsed.error().message, {}};
      return parsed;
    }
    if (response->status == 429 && attempt < 4 && response->retry_after_seconds >= 0) {
      std::this_thread::sleep_for(std::chrono::seconds(std::min(response->retry_after_seconds, 10)));
      continue;
    }
    return KubeStatusError(response->status, RbacVerb(method, resource), resource, response->body);
  }
}

Result<Value> KubeClient::Get(const KubeResource& object, RequestLog& log) {
  return Call("GET", object, "", "", false, log);
}

Result<bool> KubeClient::Serves(const std::string& api_version, const std::string& plural, RequestLog& log) {
  auto resources = Get({api_version, "", "", "", ""}, log);
  if (!resources.ok()) {
    if (resources.error().code == ErrorCode::kNotFound) return false;
    return resources.error();
  }
  const Value* list = ValueAt(*resources, {"resources"});
  if (list == nullptr || !list->is_list()) return false;
  return std::any_of(list->list_value().begin(), list->list_value().end(), [&](const Value& resource) {
    const Value* name = ValueAt(resource, {"name"});
    return name != nullptr && name->is_string() && name->string_value() == plural;
  });
}

Result<Value> KubeClient::List(const KubeResource& collection, const std::string& label_selector,
                               RequestLog& log, const std::string& field_selector) {
  Value::List items;
  Value first = Value::Null();
  std::string continue_token;
  std::set<std::string> tokens_asked;
  int pages = 0;
  do {
    if (++pages > kKubeListPages || !tokens_asked.insert(continue_token).second) {
      return Error{
          ErrorCode::kUnavailable,
          "list " + collection.plural + ": " +
              (pages > kKubeListPages ? "more than " + std::to_string(kKubeListPages) + " pages"
                                      : std::string("the server handed out a continue token again")) +
              " (the bound for one list); stopped there",
          {}};
    }
    std::string query = "limit=" + std::to_string(page_size_);
    if (!label_selector.empty()) query += "&labelSelector=" + Escape(label_selector);
    if (!field_selector.empty()) query += "&fieldSelector=" + Escape(field_selector);
    if (!continue_token.empty()) query += "&continue=" + Escape(continue_token);
    auto page = Call("GET", collection, query, "", false, log, kKubeListPageBytes);
    if (!page.ok()) return page.error();
    if (!page->is_map())
      return Error{ErrorCode::kUnavailable, "list " + collection.plural + ": not a list", {}};
    if (const Value* page_items = page->Find("items"); page_items != nullptr && page_items->is_list()) {
      if (items.size() + page_items->list_value().size() > kKubeListItems) {
        return Error{ErrorCode::kUnavailable,
                     "list " + collection.plural + ": more than " + std::to_string(kKubeListItems) +
                         " items (the bound for one list); stopped there",
                     {}};
      }
      items.insert(items.end(), page_items->list_value().begin(), page_items->list_value().end());
    }
    const Value* metadata = page->Find("metadata");
    const Value* next = metadata != nullptr && metadata->is_map() ? metadata->Find("continue") : nullptr;
    continue_token = next != nullptr && next->is_string() ? next->string_value() : "";
    if (first.is_null()) first = *page;
  } while (!continue_token.empty());
  Value::Map list;
  for (const auto& [key, value] : first.map_value()) {
    if (key.is_string() && key.string_value() != "items") list.emplace_back(key, value);
  }
  list.emplace_back(Value::String("items"), Value::MakeList(std::move(items)));
  return Value::MakeMap(std::move(list));
}

Result<KubeClient::WatchEnd> KubeClient::Watch(const KubeResource& collection,
                                               const std::string& label_selector,
                                               const std::string& resource_version,
                                               std::chrono::seconds timeout, const WatchHandler& on_event) {
  std::string query = "watch=true&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout.count());
  if (!resource_version.empty()) query += "&resourceVersion=" + Escape(resource_version);
  if (!label_selector.empty()) query += "&labelSelector=" + Escape(label_selector);
  const std::string url = config_.server + collection.Path() + "?" + query;
  auto token = BearerToken();
  if (!token.ok()) return token.error();
  std::vector<std::string> headers = {"Accept: application/json"};
  if (!token->empty()) headers.push_back("Authorization: Bearer " + *token);

  WatchEnd end{resource_version, false};
  LineSplitter lines(kKubeWatchEventBytes, "the API server's watch stream");
  std::string error_body;
  std::optional<Error> failure;
  auto on_line = [&](std::string_view line) {
    auto event = ParseJson(line);
    const Value* type = event.ok() && event->is_map() ? event->Find("type") : nullptr;
    const Value* object = event.ok() && event->is_map() ? event->Find("object") : nullptr;
    if (type == nullptr || !type->is_string() || object == nullptr) {
      error_body = event.ok() ? FormatJson(*event).substr(0, 4096) : std::string(line.substr(0, 4096));
      return true;  // a Status instead of an event: the HTTP status says what it is
    }
    if (type->string_value() == "ERROR") {
      const Value* code = object->is_map() ? object->Find("code") : nullptr;
      if (code != nullptr && code->is_int() && code->int_value() == 410) {
        end.expired = true;
      } else {
        failure = KubeStatusError(code != nullptr && code->is_int() ? code->int_value() : 500, "watch",
                                  collection, FormatJson(*object));
      }
      return false;
    }
    const Value* metadata = object->is_map() ? object->Find("metadata") : nullptr;
    const Value* version =
        metadata != nullptr && metadata->is_map() ? metadata->Find("resourceVersion") : nullptr;
    if (version != nullptr && version->is_string()) end.resource_version = version->string_value();
    return on_event(type->string_value(), *object);
  };
  auto on_data = [&](std::string_view data) {
    auto fed = lines.Feed(data, on_line);
    if (!fed.ok())
      failure = Error{ErrorCode::kUnavailable, "watch " + collection.plural + ": " + fed.error().message, {}};
    return fed.ok() && *fed;
  };
  // The server ends the watch after timeoutSeconds; the transfer gets a little longer.
  auto status = http_.Stream("GET", url, "", timeout + std::chrono::seconds(10), on_data, headers);
  if (!status.ok()) return status.error();
  if (failure) return *failure;
  if (*status == 410) end.expired = true;
  if (*status != 200 && *status != 410)
    return KubeStatusError(*status, "watch", collection,
                           std::string(lines.pending().substr(0, 4096)) + error_body);
  return end;
}

Result<Value> KubeClient::Create(const KubeResource& collection, const Value& object, RequestLog& log) {
  return Call("POST", collection, "", FormatJson(object), true, log);
}

Value FencedMergePatch(const std::string& resource_version, std::string_view field, Value content) {
  if (field == "metadata" && content.is_map()) {
    Value::Map metadata = content.map_value();
    metadata.emplace_back(Value::String("resourceVersion"), Value::String(resource_version));
    return Value::MakeMap({{Value::String("metadata"), Value::MakeMap(std::move(metadata))}});
  }
  return Value::MakeMap({{Value::String("metadata"), Value::MakeMap({{Value::String("resourceVersion"),
                                                                      Value::String(resource_version)}})},
                         {Value::String(std::string(field)), std::move(content)}});
}

std::string FormatMicroTime(std::chrono::system_clock::time_point time) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%06lldZ", static_cast<long long>(micros % 1000000));
  return text;
}

std::string ResourceVersionOf(const Value& object) {
  const Value* version = ValueAt(object, {"metadata", "resourceVersion"});
  return version != nullptr && version->is_string() ? version->string_value() : "";
}

Result<Value> KubeClient::MergePatch(const KubeResource& object, const Value& patch, RequestLog& log) {
  // An empty resourceVersion in a merge patch is no precondition at all: the
  // write would be unconditional where the caller meant it fenced.
  if (const Value* version = ValueAt(patch, {"metadata", "resourceVersion"});
      version != nullptr && version->is_string() && version->string_value().empty()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "a fenced patch of " + object.name + " has no resourceVersion: the object was not observed",
                 {}};
  }
  return Call("PATCH", object, "", FormatJson(patch), true, log);
}

Status KubeClient::Delete(const KubeResource& object, const DeletePreconditions& preconditions,
                          std::optional<int64_t> grace_period_seconds, RequestLog& log,
                          std::string_view propagation_policy) {
  Value::Map options = {{Value::String("apiVersion"), Value::String("v1")},
                        {Value::String("kind"), Value::String("DeleteOptions")}};
  if (grace_period_seconds) {
    options.emplace_back(Value::String("gracePeriodSeconds"), Value::Int(*grace_period_seconds));
  }
  if (!propagation_policy.empty()) {
    options.emplace_back(Value::String("propagationPolicy"), Value::String(std::string(propagation_policy)));
  }
  // The API server reads a DELETE's options from its body when it has one,
  // and then ignores the query's dryRun.
  if (server_dry_run_) options.emplace_back(Value::String("dryRun"), Value::MakeList({Value::String("All")}));
  Value::Map required;
  if (!preconditions.resource_version.empty()) {
    required.emplace_back(Value::String("resourceVersion"), Value::String(preconditions.resource_version));
  }
  if (!preconditions.uid.empty())
    required.emplace_back(Value::String("uid"), Value::String(preconditions.uid));
  if (!required.empty())
    options.emplace_back(Value::String("preconditions"), Value::MakeMap(std::move(required)));
  auto deleted = Call("DELETE", object, "", FormatJson(Value::MakeMap(std::move(options))), true, log);
  if (!deleted.ok() && deleted.error().code == ErrorCode::kNotFound) return {};
  if (!deleted.ok()) return deleted.error();
  return {};
}

}  // namespace ruleplane
