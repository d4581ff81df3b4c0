#include "config/dump.hpp"

#include <memory>
#include <vector>

#include "config/schema_table.hpp"

namespace trainio::config {

namespace {

struct Node {
  std::string name;
  std::string value;    // leaves only
  std::string comment;  // leaves only
  std::vector<std::unique_ptr<Node>> children;

  Node* child(const std::string& child_name) {
    for (auto& c : children)
      if (c->name == child_name) return c.get();
    children.push_back(std::make_unique<Node>());
    children.back()->name = child_name;
    return children.back().get();
  }
};

void emit(const Node& node, int depth, std::string& out) {
  for (const auto& c : node.children) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += c->name + ":";
    if (c->children.empty()) {
      out += " " + c->value;
      if (!c->comment.empty()) out += "  # " + c->comment;
      out += "\n";
    } else {
      out += "\n";
      emit(*c, depth + 1, out);
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> resolved_values(const Workload& w) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : detail::entries())
    if (e.get) out.emplace_back(e.info.path, e.get(w));
  return out;
}

std::string to_yaml(const Workload& w, bool annotate) {
  Node root;
  for (const auto& e : detail::entries()) {
    if (!e.get) continue;
    Node* n = &root;
    size_t start = 0;
    const std::string& path = e.info.path;
    while (true) {
      const auto dot = path.find('.', start);
      n = n->child(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    n->value = e.get(w);
    if (annotate && e.info.status == KeyStatus::pending) n->comment = status_label(e.info.status);
  }
  std::string out;
  emit(root, 0, out);
  return out;
}

}  // namespace trainio::config
