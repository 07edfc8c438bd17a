// A core/v1 Event about an Etcd object, as `kubectl describe etcd` shows it.
#pragma once

#include <string>

#include "engine/common/time_util.h"
#include "engine/common/value.h"

namespace ruleplane {

struct EtcdEventFields {
  std::string name;  // "" = generateName "<etcd>." (a new Event each time)
  std::string type = "Normal";
  std::string reason;
  std::string message;
  std::string action;  // the step's action, when the Event is about one
};

// `etcd`: the Etcd object as observed (its name, namespace and uid).
Value EtcdEvent(const Value& etcd, const EtcdEventFields& fields, Timestamp now);

}  // namespace ruleplane
