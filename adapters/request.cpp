#include "adapters/request.h"

namespace ruleplane {
namespace {

const char* KindName(Request::Kind kind) {
  switch (kind) {
    case Request::Kind::kHttp:
      return "http";
    case Request::Kind::kCommand:
      return "command";
    case Request::Kind::kFile:
      return "file";
  }
  return "?";
}

}  // namespace

std::string DescribeRequest(const Request& request) {
  std::string line;
  switch (request.kind) {
    case Request::Kind::kHttp:
      line = request.verb + " " + request.target;
      if (!request.body.empty()) line += " " + request.body;
      return line;
    case Request::Kind::kCommand:
      line = "run " + request.verb;
      for (const std::string& arg : request.args) line += " " + arg;
      return line;
    case Request::Kind::kFile:
      line = request.verb + " " + request.target;
      for (const std::string& arg : request.args) line += " -> " + arg;
      if (!request.body.empty()) line += " (" + request.body + ")";
      return line;
  }
  return line;
}

Value RequestToValue(const Request& request) {
  Value::Map map = {{Value::String("kind"), Value::String(KindName(request.kind))},
                    {Value::String("verb"), Value::String(request.verb)}};
  if (!request.target.empty()) map.emplace_back(Value::String("target"), Value::String(request.target));
  if (!request.args.empty()) {
    Value::List args;
    for (const std::string& arg : request.args) args.push_back(Value::String(arg));
    map.emplace_back(Value::String("args"), Value::MakeList(std::move(args)));
  }
  if (!request.body.empty()) map.emplace_back(Value::String("body"), Value::String(request.body));
  if (!request.mutates) map.emplace_back(Value::String("mutates"), Value::Bool(false));
  return Value::MakeMap(std::move(map));
}

bool RequestLog::Record(Request request) {
  const bool send = !dry_run_ || !request.mutates;
  requests_.push_back(std::move(request));
  return send;
}

}  // namespace ruleplane
