// One entry of the Etcd's status lists (status.conditions by type,
// status.members by name) as the status actions read and write it: from the
// step's parameters, through KubernetesActionContext.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "actions/kubernetes/kubernetes_action_context.h"

namespace ruleplane {

// The entry of the Etcd's status.<list_field> whose `key_field` is `key`, read
// fresh; nullopt when there is none.
Result<std::optional<Value>> FreshStatusEntry(KubernetesActionContext& context, std::string_view list_field,
                                              std::string_view key_field, const std::string& key,
                                              RequestLog& log);

// Whether every field the step gives is already on `entry`.
bool HasStepFields(const Value& entry, const PlanStep& step, std::initializer_list<std::string_view> fields);

// The step's params named `fields` (those it gives) as a status entry, its
// key first. A step without lastTransitionTime gets the current time: the
// entry keeps its own while its status stays the same (WithStatusEntry), and
// a changed one needs the time of the change (the status rules time their
// grace periods from it).
Value StatusEntryFromStep(const PlanStep& step, const std::string& key_field, const std::string& key,
                          std::initializer_list<const char*> fields);

// Patches status.<list_field> with `entry` added or updated (WithStatusEntry).
Status WriteStatusEntry(KubernetesActionContext& context, const std::string& list_field,
                        std::string_view key_field, const Value& entry, RequestLog& log);

// Patches status.<list_field> without the entries whose `key_field` is `key`.
Status RemoveStatusEntry(KubernetesActionContext& context, const std::string& list_field,
                         std::string_view key_field, const std::string& key, RequestLog& log);

}  // namespace ruleplane
