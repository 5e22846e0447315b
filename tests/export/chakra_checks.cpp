#include "tests/export/chakra_checks.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace gpucal::calibration::testing {

namespace pb = ChakraProtoMsg;
using Attr = pb::AttributeProto;

DecodedTrace read_trace(const std::string& dir, int64_t rank) {
  const std::string path = dir + "/workload." + std::to_string(rank) + ".et";
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error(path + ": cannot open");
  DecodedTrace t;
  t.rank = rank;
  {
    google::protobuf::io::FileInputStream file(fd);
    google::protobuf::io::CodedInputStream in(&file);
    auto next = [&](google::protobuf::MessageLite& m) {
      uint32_t size = 0;
      if (!in.ReadVarint32(&size)) return false;
      const auto limit = in.PushLimit(static_cast<int>(size));
      if (!m.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage() || in.BytesUntilLimit() != 0)
        throw std::runtime_error(path + ": a message does not parse");
      in.PopLimit(limit);
      return true;
    };
    if (!next(t.meta)) throw std::runtime_error(path + ": no GlobalMetadata");
    for (pb::Node n; next(n); n.Clear()) t.nodes.push_back(n);
  }
  ::close(fd);
  return t;
}

const Attr* find_attr(const pb::Node& node, const std::string& name) {
  for (const Attr& a : node.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {

std::string where(const DecodedTrace& t, const pb::Node& n) {
  return "rank " + std::to_string(t.rank) + " node " + std::to_string(n.id()) + " (" + n.name() + ")";
}

// Checks `name` is present with the value type `kind` and `ok(value)`.
template <typename Ok>
void expect_attr(std::vector<std::string>& errors, const DecodedTrace& t, const pb::Node& n, const std::string& name,
                 Attr::ValueCase kind, Ok ok) {
  const Attr* a = find_attr(n, name);
  if (!a)
    errors.push_back(where(t, n) + ": no " + name);
  else if (a->value_case() != kind)
    errors.push_back(where(t, n) + ": " + name + " has value type " + std::to_string(a->value_case()));
  else if (!ok(*a))
    errors.push_back(where(t, n) + ": " + name + " out of range");
}

void check_collective(std::vector<std::string>& errors, const DecodedTrace& t, const pb::Node& n,
                      const nlohmann::json& groups) {
  expect_attr(errors, t, n, "comm_type", Attr::kInt64Val, [](const Attr& a) {
    const auto v = a.int64_val();
    return v == pb::ALL_REDUCE || v == pb::ALL_GATHER || v == pb::REDUCE_SCATTER || v == pb::ALL_TO_ALL;
  });
  expect_attr(errors, t, n, "comm_size", Attr::kInt64Val, [](const Attr& a) { return a.int64_val() > 0; });
  expect_attr(errors, t, n, "pg_name", Attr::kStringVal, [&](const Attr& a) {
    const std::string& id = a.string_val();
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos || id == "0" || !groups.contains(id))
      return false;
    const auto& members = groups[id];
    return std::find(members.begin(), members.end(), t.rank) != members.end();
  });
  expect_attr(errors, t, n, "involved_dim", Attr::kBoolList, [](const Attr& a) {
    const auto& v = a.bool_list().values();
    return !v.empty() && std::find(v.begin(), v.end(), true) != v.end();
  });
  expect_attr(errors, t, n, "comm_priority", Attr::kInt32Val, [](const Attr&) { return true; });
}

void check_message(std::vector<std::string>& errors, const DecodedTrace& t, const pb::Node& n, int64_t world) {
  const bool send = n.type() == pb::COMM_SEND_NODE;
  auto in_range = [&](int32_t r) { return r >= 0 && r < world && r != t.rank; };
  expect_attr(errors, t, n, "comm_src", Attr::kInt32Val,
              [&](const Attr& a) { return send ? a.int32_val() == t.rank : in_range(a.int32_val()); });
  expect_attr(errors, t, n, "comm_dst", Attr::kInt32Val,
              [&](const Attr& a) { return send ? in_range(a.int32_val()) : a.int32_val() == t.rank; });
  expect_attr(errors, t, n, "comm_tag", Attr::kInt32Val, [](const Attr& a) { return a.int32_val() >= 0; });
  expect_attr(errors, t, n, "comm_size", Attr::kInt64Val, [](const Attr& a) { return a.int64_val() > 0; });
}

}  // namespace

std::vector<std::string> check_fields(const DecodedTrace& t, const nlohmann::json& groups, int64_t world) {
  std::vector<std::string> errors;
  if (t.meta.version().empty()) errors.push_back("rank " + std::to_string(t.rank) + ": GlobalMetadata has no version");
  std::set<uint64_t> ids;
  for (const auto& n : t.nodes)
    if (!ids.insert(n.id()).second) errors.push_back(where(t, n) + ": id repeated");
  for (const auto& n : t.nodes) {
    for (auto d : n.data_deps())
      if (!ids.count(d)) errors.push_back(where(t, n) + ": depends on missing node " + std::to_string(d));
    expect_attr(errors, t, n, "is_cpu_op", Attr::kBoolVal, [](const Attr& a) { return !a.bool_val(); });
    switch (n.type()) {
      case pb::COMP_NODE:
        expect_attr(errors, t, n, "num_ops", Attr::kInt64Val, [](const Attr& a) { return a.int64_val() > 0; });
        expect_attr(errors, t, n, "tensor_size", Attr::kUint64Val, [](const Attr& a) { return a.uint64_val() > 0; });
        break;
      case pb::COMM_COLL_NODE:
        check_collective(errors, t, n, groups);
        break;
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE:
        check_message(errors, t, n, world);
        break;
      default:
        errors.push_back(where(t, n) + ": node type " + std::to_string(n.type()) + " is not one we write");
    }
  }
  return errors;
}

std::vector<std::string> check_acyclic(const DecodedTrace& t) {
  std::map<uint64_t, std::vector<uint64_t>> children;
  std::map<uint64_t, int64_t> waiting;
  for (const auto& n : t.nodes) {
    waiting[n.id()] += 0;
    for (auto d : n.data_deps()) children[d].push_back(n.id()), ++waiting[n.id()];
  }
  std::vector<uint64_t> ready;
  for (const auto& [id, w] : waiting)
    if (w == 0) ready.push_back(id);
  std::size_t visited = 0;
  while (!ready.empty()) {
    const uint64_t id = ready.back();
    ready.pop_back();
    ++visited;
    for (auto c : children[id])
      if (--waiting[c] == 0) ready.push_back(c);
  }
  if (visited == t.nodes.size()) return {};
  return {"rank " + std::to_string(t.rank) + ": " + std::to_string(t.nodes.size() - visited) + " node(s) on a cycle"};
}

std::vector<std::string> check_group_agreement(const std::vector<DecodedTrace>& traces, const nlohmann::json& groups) {
  std::vector<std::string> errors;
  using Sequence = std::vector<std::pair<int64_t, int64_t>>;  // (comm_type, comm_size)
  std::map<std::string, std::map<int64_t, Sequence>> by_group;
  for (const auto& t : traces)
    for (const auto& n : t.nodes)
      if (n.type() == pb::COMM_COLL_NODE) {
        const Attr *g = find_attr(n, "pg_name"), *type = find_attr(n, "comm_type"), *size = find_attr(n, "comm_size");
        if (g && type && size) by_group[g->string_val()][t.rank].emplace_back(type->int64_val(), size->int64_val());
      }
  for (const auto& [id, members] : groups.items()) {
    const auto& seqs = by_group[id];
    const Sequence* first = nullptr;
    for (const auto& m : members) {
      const auto it = seqs.find(m.get<int64_t>());
      const Sequence empty;
      const Sequence& s = it == seqs.end() ? empty : it->second;
      if (!first) {
        first = &s;
      } else if (s != *first) {
        errors.push_back("group " + id + ": rank " + m.dump() + " issues " + std::to_string(s.size()) +
                         " collectives that differ from rank " + members[0].dump() + "'s " +
                         std::to_string(first->size()));
      }
    }
    if (first && first->empty()) errors.push_back("group " + id + ": no collective uses it");
  }
  return errors;
}

std::vector<std::string> check_messages_match(const std::vector<DecodedTrace>& traces) {
  std::map<std::tuple<int32_t, int32_t, int32_t, int64_t>, std::pair<int64_t, int64_t>> seen;  // -> (sends, recvs)
  for (const auto& t : traces)
    for (const auto& n : t.nodes)
      if (n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE) {
        const auto key = std::make_tuple(find_attr(n, "comm_src")->int32_val(), find_attr(n, "comm_dst")->int32_val(),
                                         find_attr(n, "comm_tag")->int32_val(), find_attr(n, "comm_size")->int64_val());
        auto& [sends, recvs] = seen[key];
        ++(n.type() == pb::COMM_SEND_NODE ? sends : recvs);
      }
  std::vector<std::string> errors;
  for (const auto& [k, count] : seen)
    if (count.first != 1 || count.second != 1)
      errors.push_back("message " + std::to_string(std::get<0>(k)) + " -> " + std::to_string(std::get<1>(k)) +
                       " tag " + std::to_string(std::get<2>(k)) + ": " + std::to_string(count.first) + " send(s), " +
                       std::to_string(count.second) + " receive(s)");
  return errors;
}

}  // namespace gpucal::calibration::testing
