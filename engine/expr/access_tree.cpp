#include "engine/expr/access_tree.h"

#include <utility>

#include "engine/expr/functions.h"
#include "engine/expr/program_node.h"

namespace ruleplane::expr {
namespace {

void MergeInto(AccessTree& into, const AccessTree& from) {
  into.whole = into.whole || from.whole;
  into.every_key = into.every_key || from.every_key;
  for (const auto& [name, child] : from.fields) MergeInto(into.Field(name), child);
  if (from.element) MergeInto(into.Element(), *from.element);
}

void Append(AccessSet& to, const AccessSet& more) { to.insert(to.end(), more.begin(), more.end()); }

}  // namespace

AccessTree& AccessTree::Field(const std::string& name) {
  auto [it, inserted] = fields.try_emplace(name);
  if (inserted) it->second.name = Value::String(name);
  return it->second;
}

AccessTree& AccessTree::Element() {
  if (!element) element = std::make_unique<AccessTree>();
  return *element;
}

void AccessTree::Normalize() {
  if (element) {
    element->Normalize();
    for (auto& [name, child] : fields) MergeInto(child, *element);
  }
  for (auto& [name, child] : fields) child.Normalize();
}

void AccessAnalysis::Bind(int slot, AccessSet values) { bound_[slot] = std::move(values); }

AccessSet AccessAnalysis::Visit(const Program& program) { return Visit(program.root()); }

void AccessAnalysis::ReadWhole(const AccessSet& values) {
  for (AccessTree* tree : values) tree->whole = true;
}

void AccessAnalysis::EveryKey(const AccessSet& values) {
  for (AccessTree* tree : values) tree->every_key = true;
}

void AccessAnalysis::Finish() {
  // A list built later may be built from an earlier one's elements: latest first.
  for (auto it = built_lists_.rbegin(); it != built_lists_.rend(); ++it) {
    const AccessTree& list = *it->list;
    for (AccessTree* from : it->elements_from) {
      if (list.whole) from->whole = true;
      if (list.element) MergeInto(*from, *list.element);
    }
  }
}

AccessSet AccessAnalysis::Elements(const AccessSet& values) {
  AccessSet elements;
  for (AccessTree* tree : values) {
    tree->every_key = true;
    elements.push_back(&tree->Element());
  }
  return elements;
}

AccessSet AccessAnalysis::Visit(const Node& node) {
  const auto visit_all_whole = [this](const Node& parent) {
    for (const auto& child : parent.children) ReadWhole(Visit(*child));
    return AccessSet{};
  };
  switch (node.kind) {
    case Node::Kind::kConstant:
      return {};
    case Node::Kind::kSlot: {
      const auto it = bound_.find(node.slot);
      return it == bound_.end() ? AccessSet{} : it->second;
    }
    case Node::Kind::kSelect:
    case Node::Kind::kHas: {
      AccessSet fields;
      for (AccessTree* tree : Visit(*node.children[0])) fields.push_back(&tree->Field(node.field));
      if (node.kind == Node::Kind::kHas) return {};
      return fields;
    }
    case Node::Kind::kIndex: {
      const AccessSet base = Visit(*node.children[0]);
      const Node& key = *node.children[1];
      ReadWhole(Visit(key));
      if (key.kind == Node::Kind::kConstant && key.value.is_string()) {
        AccessSet fields;
        for (AccessTree* tree : base) fields.push_back(&tree->Field(key.value.string_value()));
        return fields;
      }
      return Elements(base);
    }
    case Node::Kind::kBinary:
      // `"key" in m` looks for one key of a map. In a list it looks at the
      // elements, which a projection always keeps, and a constant can only
      // equal a scalar one, and scalars are always built whole.
      if (node.op == Operator::kIn && node.children[0]->kind == Node::Kind::kConstant) {
        const Value& key = node.children[0]->value;
        for (AccessTree* tree : Visit(*node.children[1])) {
          if (key.is_string()) tree->Field(key.string_value());
        }
        return {};
      }
      return visit_all_whole(node);
    case Node::Kind::kList:
    case Node::Kind::kMap:
    case Node::Kind::kUnary:
    case Node::Kind::kAnd:
    case Node::Kind::kOr:
      return visit_all_whole(node);
    case Node::Kind::kConditional: {
      ReadWhole(Visit(*node.children[0]));
      AccessSet result = Visit(*node.children[1]);
      Append(result, Visit(*node.children[2]));
      return result;
    }
    case Node::Kind::kCall:
      if (node.function != nullptr && node.function->builtin == Builtin::kSize) {
        EveryKey(Visit(*node.children[0]));
        return {};
      }
      return visit_all_whole(node);
    case Node::Kind::kComprehension: {
      const AccessSet range = Visit(*node.children[0]);
      const AccessSet elements = Elements(range);
      const auto saved = bound_;
      if (node.second_slot >= 0) {
        bound_.erase(node.slot);  // the index or key: a value of its own
        bound_[node.second_slot] = elements;
      } else {
        bound_[node.slot] = elements;  // a list's element, or a map's key (a string)
      }
      // Predicates are read whole; map's transform makes the elements of a new list.
      AccessSet transformed;
      for (size_t i = 1; i < node.children.size(); ++i) {
        AccessSet part = Visit(*node.children[i]);
        if (node.macro == MacroKind::kMap && i + 1 == node.children.size()) {
          transformed = std::move(part);
        } else {
          ReadWhole(part);
        }
      }
      bound_ = saved;
      if (node.macro == MacroKind::kFilter) return range;  // a part of its range
      if (node.macro != MacroKind::kMap) return {};
      BuiltList& built = built_lists_.emplace_back();
      built.elements_from = std::move(transformed);
      return {built.list.get()};
    }
  }
  return {};
}

}  // namespace ruleplane::expr
