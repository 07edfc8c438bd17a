// AccessTree: which parts of a value a set of programs can read, found by
// walking their checked trees once, at compile time. The planner uses it to
// build from a snapshot's JSON only what the rule sets can read
// (engine/plan/snapshot_projection.h).
//
//   AccessTree snapshot;
//   expr::AccessAnalysis analysis;
//   analysis.Bind(layout.snapshot_slot(), {&snapshot});
//   analysis.ReadWhole(analysis.Visit(program));   // the result is used whole
//
// Sound by construction rather than precise: anything the analysis does not
// model (a function's arguments, an equality, a list literal) reads its
// operands whole.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/expr/expression.h"

namespace ruleplane::expr {

struct AccessTree {
  bool whole = false;      // read entirely (compared, converted, output)
  bool every_key = false;  // every key of a map (or element of a list) is looked at
  std::map<std::string, AccessTree, std::less<>> fields;
  std::unique_ptr<AccessTree> element;  // every list element; every value of a map (so every key)
  Value name;                           // the field's name as a Value, for building maps without a copy of it

  AccessTree& Field(const std::string& name);
  AccessTree& Element();
  // Folds `element` into each named field, so that a field's tree alone
  // says everything that may be read of it. Call once, after the analysis.
  void Normalize();
};

// A value the analysis follows: the trees it may be a part of (none for a
// value computed by the program itself).
using AccessSet = std::vector<AccessTree*>;

class AccessAnalysis {
 public:
  // What a slot holds while later programs are visited (a fact's result,
  // a loop variable); unbound slots hold values of their own.
  void Bind(int slot, AccessSet values);
  // Records what `program` reads and returns what its result may be.
  AccessSet Visit(const Program& program);

  // Propagates what was read of map() results to the values they were built
  // from. Call once, after the last Visit.
  void Finish();

  static void ReadWhole(const AccessSet& values);
  static void EveryKey(const AccessSet& values);
  static AccessSet Elements(const AccessSet& values);  // every_key + element of each

 private:
  // A list built by map(): its elements are the transform's results.
  struct BuiltList {
    std::unique_ptr<AccessTree> list = std::make_unique<AccessTree>();
    AccessSet elements_from;
  };

  AccessSet Visit(const Node& node);
  std::map<int, AccessSet> bound_;
  std::vector<BuiltList> built_lists_;
};

}  // namespace ruleplane::expr
