// What the templates (etcd_templates.h) share: nlohmann JSON to build an
// object and the Value it is returned as, the labels, owner reference and
// metadata every object of an Etcd carries, the names of storage providers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

using Json = nlohmann::ordered_json;

Json ToJson(const Value& value);
Result<Value> ToValue(const Json& json);

// kFailedPrecondition: "Etcd <name>: <field> <why>".
Error Missing(const Value& etcd, const std::string& field, const std::string& why);

// The Etcd as the controlling owner (blockOwnerDeletion too).
Json OwnerReference(const Value& etcd);

// The Etcd as the controlling owner, without blockOwnerDeletion (the Leases
// and the budget), as a Value.
Value ControllerReference(const Value& etcd);

// {"name": "etcd", "instance": <etcd>}: the member pods' labels.
Json SelectorLabels(const std::string& name);

// name, namespace, SelectorLabels and OwnerReference.
Json ObjectMeta(const Value& etcd, const std::string& object_name);

// etcd-druid's storage provider name for backup-restore
// (StorageProviderFromInfraProvider): "aws" and "S3" are "S3", ...; "" for "".
Result<std::string> StorageProvider(const std::string& provider);

// "<scheme>" of the client or peer URLs: https when that side has TLS.
std::string Scheme(const Value& etcd, std::string_view tls_field);

}  // namespace ruleplane
