// The rule files and action catalogue built into the binary (rules/**.yaml,
// actions/catalogue.yaml), so that ruleplane works from any directory.
#pragma once

#include <string>
#include <vector>

namespace ruleplane {

struct BundledFile {
  std::string path;  // relative to the source tree, e.g. "rules/etcd-druid/status.yaml"
  std::string content;
};

const std::vector<BundledFile>& BundledFiles();

}  // namespace ruleplane
