#include "app/export/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>
#include <stdexcept>

#include "app/export/chakra_et.pb.h"
#include "app/predict/op_cost.h"
#include "core/formulas/kernel_table.h"

namespace gpucal::calibration {

namespace pb = ChakraProtoMsg;
using model::ModelOp;
using model::OpKind;

int64_t astrasim_comm_size(const std::string& collective, int64_t size_bytes, int64_t group_size) {
  return collective == "allgather" ? size_bytes / group_size : size_bytes;
}

double compute_bytes(const ModelOp& op) {
  const double e = static_cast<double>(dtype_bytes(op.dtype));
  if (op.kind == OpKind::gemm) {
    const auto& g = op.gemm;
    const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
    const double c = m * n * static_cast<double>(dtype_bytes(g.out_dtype)) * (g.beta != 0 ? 2 : 1);
    return static_cast<double>(g.batch) * ((m * k + k * n) * e + c);
  }
  if (op.kind == OpKind::attention) {
    const auto& a = op.attention;
    const double q = static_cast<double>(a.batch * a.heads * a.seq_q * a.head_dim) * e;
    const double kv = static_cast<double>(a.batch * a.kv_heads * a.seq_kv * a.head_dim) * e;
    return a.pass == "fwd" ? 2 * q + 2 * kv : 4 * q + 4 * kv;  // Q, O (+ dO, dQ); K, V (+ dK, dV)
  }
  if (op.kind == OpKind::memory) {
    const auto& m = op.memory;
    const auto& k = memory::find_kernel(m.kernel);
    memory::Dims d;
    d.rows = m.rows;
    d.cols = m.cols;
    d.n = m.params ? m.params : m.bytes / static_cast<int64_t>(dtype_bytes(op.dtype));
    return static_cast<double>(memory::bytes_moved(k, d, op.dtype));
  }
  return 0;
}

namespace {

pb::CollectiveCommType comm_type(const std::string& collective) {
  if (collective == "allreduce") return pb::ALL_REDUCE;
  if (collective == "allgather") return pb::ALL_GATHER;
  if (collective == "reduce_scatter") return pb::REDUCE_SCATTER;
  if (collective == "alltoall") return pb::ALL_TO_ALL;
  throw std::logic_error("no Chakra collective for '" + collective + "'");
}

template <typename Set>
void attr(pb::Node& n, const std::string& name, Set set) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  set(*a);
}

std::string node_name(const ModelOp& op, const ProgramNode& node, bool chunked) {
  std::string name = op.role;
  if (node.kind == ProgramNode::Kind::send && op.kind == OpKind::p2p && node.peer_stage < 0) name += " send";
  if (node.kind == ProgramNode::Kind::recv && op.kind == OpKind::p2p && node.peer_stage < 0) name += " recv";
  if (node.micro_batch >= 0) name += " mb" + std::to_string(node.micro_batch);
  if (chunked) name += " chunk" + std::to_string(node.chunk);
  if (node.layer >= 0) name += " layer" + std::to_string(node.layer);
  return name;
}

struct RankContext {
  const StageProgram& program;
  int64_t rank;
  RankLayout& ranks;
  const TraceShape& shape;
  CarriedRounder compute, comm;  // whole microseconds per lane (export_workload.h)
};

void fill_collective(pb::Node& n, const ModelOp& op, RankContext& c, bool critical) {
  const model::CommShape& s = op.comm;
  const int64_t id = c.ranks.group_id(s.group, c.rank);
  const auto members = static_cast<int64_t>(c.ranks.members(s.group, c.rank).size());
  if (members != s.group_size)
    throw std::logic_error(op.role + ": group " + s.group + " has " + std::to_string(members) + " ranks, the op " +
                           std::to_string(s.group_size));
  n.set_type(pb::COMM_COLL_NODE);
  attr(n, "comm_type", [&](auto& a) { a.set_int64_val(comm_type(s.collective)); });
  attr(n, "comm_size",
       [&](auto& a) { a.set_int64_val(astrasim_comm_size(s.collective, s.size_bytes, s.group_size)); });
  attr(n, "pg_name", [&](auto& a) { a.set_string_val(std::to_string(id)); });
  const int64_t nnodes = predict::group_nnodes(s.group, s.group_size, c.program.workload.layout,
                                               c.shape.ranks_per_node);
  attr(n, "involved_dim", [&](auto& a) {
    a.mutable_bool_list()->add_values(s.group_size / nnodes > 1);
    if (c.shape.network_dims > 1) a.mutable_bool_list()->add_values(nnodes > 1);
  });
  attr(n, "comm_priority", [&](auto& a) { a.set_int32_val(critical ? 1 : 0); });
}

void fill_message(pb::Node& n, const ProgramNode& node, const ModelOp& op, RankContext& c) {
  int64_t peer = 0;
  if (node.peer_stage >= 0) {
    peer = c.ranks.stage_peer(c.rank, node.peer_stage);
  } else {  // the context-parallel ring: send to the next rank of the cp group, receive from the previous
    const auto ring = c.ranks.members("cp", c.rank);
    const auto n_ring = static_cast<int64_t>(ring.size());
    int64_t me = 0;
    while (ring[me] != c.rank) ++me;
    peer = ring[(me + (node.kind == ProgramNode::Kind::send ? 1 : n_ring - 1)) % n_ring];
  }
  const bool send = node.kind == ProgramNode::Kind::send;
  n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
  attr(n, "comm_src", [&](auto& a) { a.set_int32_val(static_cast<int32_t>(send ? c.rank : peer)); });
  attr(n, "comm_dst", [&](auto& a) { a.set_int32_val(static_cast<int32_t>(send ? peer : c.rank)); });
  attr(n, "comm_tag", [&](auto& a) { a.set_int32_val(static_cast<int32_t>(node.tag)); });
  attr(n, "comm_size", [&](auto& a) { a.set_int64_val(op.comm.size_bytes); });
}

pb::Node make_node(std::size_t index, RankContext& c) {
  const ProgramNode& node = c.program.nodes[index];
  const ProgramOp& pop = c.program.ops[node.op];
  const ModelOp& op = pop.op;
  pb::Node n;
  n.set_id(index);
  n.set_name(node_name(op, node, c.program.chunks > 1));
  for (std::size_t d : node.deps) n.add_data_deps(d);
  attr(n, "is_cpu_op", [](auto& a) { a.set_bool_val(false); });
  if (node.kind == ProgramNode::Kind::compute) {
    n.set_type(pb::COMP_NODE);
    n.set_duration_micros(c.compute.next(pop.time_us));
    const double bytes = compute_bytes(op);
    const double ops = op.kind == OpKind::memory ? bytes / static_cast<double>(dtype_bytes(op.dtype)) : op.flops();
    attr(n, "num_ops", [&](auto& a) { a.set_int64_val(std::max<int64_t>(1, std::llround(ops))); });
    attr(n, "tensor_size", [&](auto& a) { a.set_uint64_val(static_cast<uint64_t>(std::llround(bytes))); });
  } else {
    // A recv takes no time of its own on the rank: the message's time is the send's.
    const bool timed = node.kind != ProgramNode::Kind::recv;
    n.set_duration_micros(timed ? c.comm.next(pop.time_us) : 0);
    if (node.kind == ProgramNode::Kind::collective)
      fill_collective(n, op, c, !predict::dp_gradient_reduction(op));
    else
      fill_message(n, node, op, c);
  }
  attr(n, "gpucal_role", [&](auto& a) { a.set_string_val(op.role); });
  attr(n, "gpucal_provenance", [&](auto& a) { a.set_string_val(pop.provenance); });
  attr(n, "gpucal_time_us", [&](auto& a) { a.set_double_val(pop.time_us); });
  return n;
}

}  // namespace

std::string chakra_trace(const StageProgram& program, int64_t rank, RankLayout& ranks, const TraceShape& shape,
                         const std::string& description) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    auto put = [&](const google::protobuf::MessageLite& m) {
      coded.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
      m.SerializeToCodedStream(&coded);
    };
    pb::GlobalMetadata meta;
    meta.set_version("1.0.0");
    auto meta_attr = [&](const std::string& name, const std::string& value) {
      pb::AttributeProto* a = meta.add_attr();
      a->set_name(name);
      a->set_string_val(value);
    };
    meta_attr("generator", "gpucal export --to chakra");
    meta_attr("workload", description);
    meta_attr("rank", std::to_string(rank));
    meta_attr("pipeline_stage", std::to_string(program.workload.facts.stage));
    put(meta);
    RankContext c{.program = program, .rank = rank, .ranks = ranks, .shape = shape};
    for (std::size_t i = 0; i < program.nodes.size(); ++i) put(make_node(i, c));
  }
  return out;
}

}  // namespace gpucal::calibration
