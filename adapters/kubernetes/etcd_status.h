// Entries of the Etcd object's status lists (status.conditions by type,
// status.members by name), updated as etcd-druid updates them: the fields
// given replace the entry's, and lastTransitionTime moves only when the
// entry's status changes, so that it says since when the status holds.
#pragma once

#include <string_view>

#include "engine/common/value.h"

namespace ruleplane {

// `list` with the entry whose `key` field equals `fields`' one updated by
// `fields` (a map; null values are skipped), or `fields` appended when there
// is none. A lastTransitionTime in `fields` is written only when the status
// changes or the entry has none.
Value::List WithStatusEntry(Value::List list, std::string_view key, const Value& fields);

}  // namespace ruleplane
