// gpucal export --to chakra end to end: every .et decoded with protobuf and checked as ASTRA-sim
// reads it (tests/export/chakra_checks.h), and held against `gpucal predict` with the same model,
// layout and calibration: per rank, the same operations, calls, times and message bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "tests/calibration/test_util.h"
#include "tests/export/chakra_checks.h"
#include "tests/export/workload_fixture.h"

namespace gpucal::calibration::testing {
namespace {

using nlohmann::json;
namespace pb = ChakraProtoMsg;

struct Exported {
  json groups;
  std::vector<DecodedTrace> traces;
};

std::string lines(const std::vector<std::string>& errors) {
  std::string s;
  for (std::size_t i = 0; i < errors.size() && i < 10; ++i) s += errors[i] + "\n";
  return s;
}

// The nccl-tests size of a trace's message node (all-gather's comm_size is per rank).
int64_t nccl_size(const pb::Node& n, const json& groups) {
  const int64_t size = find_attr(n, "comm_size")->int64_val();
  if (n.type() != pb::COMM_COLL_NODE || find_attr(n, "comm_type")->int64_val() != pb::ALL_GATHER) return size;
  return size * static_cast<int64_t>(groups[find_attr(n, "pg_name")->string_val()].size());
}

struct RoleSum {
  int64_t calls = 0, bytes = 0;
  double time_us = 0;
};

// Per role, the trace's calls, exact times and message bytes, against predict.json's ops.
void expect_matches_prediction(const DecodedTrace& t, const json& groups, const json& predict) {
  std::map<std::string, RoleSum> trace;
  double duration_us = 0;
  for (const auto& n : t.nodes) {
    const std::string role = find_attr(n, "gpucal_role")->string_val();
    // A ring step is a send and a receive; a pipeline message is counted at each end, as predict does.
    if (n.type() == pb::COMM_RECV_NODE && role.rfind("pp_", 0) != 0) continue;
    RoleSum& s = trace[role];
    ++s.calls;
    if (n.type() == pb::COMP_NODE) {
      s.time_us += find_attr(n, "gpucal_time_us")->double_val();
      duration_us += static_cast<double>(n.duration_micros());
    } else {
      s.bytes += nccl_size(n, groups);
    }
  }
  // predict.json lists an operation once per shape: a role can have several (DP buckets of two sizes).
  std::map<std::string, RoleSum> predicted;
  std::map<std::string, bool> compute_role;
  for (const auto& op : predict["ops"]) {
    const int64_t calls = op["calls_per_step"];
    RoleSum& p = predicted[op["op_role"].get<std::string>()];
    p.calls += calls;
    p.time_us += op["time_us_per_call"].get<double>() * static_cast<double>(calls);
    compute_role[op["op_role"]] = op["category"] == "compute";
    if (op["category"] != "compute") p.bytes += op["shape"]["size_bytes"].get<int64_t>() * calls;
  }
  double compute_us = 0;
  int64_t predicted_bytes = 0, traced_bytes = 0;
  for (const auto& [role, s] : trace) traced_bytes += s.bytes;
  for (const auto& [role, p] : predicted) {
    const RoleSum s = trace[role];
    trace.erase(role);
    EXPECT_EQ(s.calls, p.calls) << "rank " << t.rank << " " << role;
    EXPECT_EQ(s.bytes, p.bytes) << "rank " << t.rank << " " << role;
    predicted_bytes += p.bytes;
    if (compute_role[role]) {
      compute_us += p.time_us;
      EXPECT_NEAR(s.time_us, p.time_us, 1e-9 * p.time_us) << "rank " << t.rank << " " << role;
    }
  }
  for (const auto& [role, s] : trace) ADD_FAILURE() << "rank " << t.rank << ": " << role << " is not in the prediction";
  EXPECT_EQ(traced_bytes, predicted_bytes) << "rank " << t.rank << ": communication bytes";
  // Whole microseconds, the rounding carried along: within half a microsecond of the exact sum.
  EXPECT_LE(std::abs(duration_us - compute_us), 0.5 + 1e-6 * compute_us) << "rank " << t.rank;
}

// Exports `model_flags` and checks every trace; with `predicted`, also against gpucal predict.
Exported export_and_check(const std::string& dir, const std::string& model_flags, int world, int pp,
                          bool predicted = true) {
  std::string log;
  EXPECT_EQ(run_gpucal("export results --to chakra " + model_flags + " --out out", log, dir), 0) << log;
  Exported e;
  e.groups = json::parse(read_text(dir + "/out/chakra/comm_group.json"));
  for (int r = 0; r < world; ++r) e.traces.push_back(read_trace(dir + "/out/chakra", r));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/chakra/workload." + std::to_string(world) + ".et"));
  for (const auto& t : e.traces) {
    EXPECT_EQ(lines(check_fields(t, e.groups, world)), "");
    EXPECT_EQ(lines(check_acyclic(t)), "");
  }
  EXPECT_EQ(lines(check_group_agreement(e.traces, e.groups)), "");
  EXPECT_EQ(lines(check_messages_match(e.traces)), "");
  EXPECT_EQ(lines(simulate_for_deadlock(e.traces, e.groups)), "");
  if (!predicted) return e;
  const auto stages = predict_stages(dir, model_flags, pp);
  for (const auto& t : e.traces) {
    const int stage = static_cast<int>(t.rank / (world / pp));  // pp is the slowest rank index
    if (!stages[stage].is_null()) expect_matches_prediction(t, e.groups, stages[stage]);
  }
  return e;
}

int64_t count_role(const DecodedTrace& t, const std::string& role, pb::NodeType type) {
  int64_t n = 0;
  for (const auto& node : t.nodes) n += node.type() == type && find_attr(node, "gpucal_role")->string_val() == role;
  return n;
}

TEST(ChakraExport, TensorAndDataParallel) {
  const std::string dir = workload_fixture_dir();
  const auto e = export_and_check(dir, "--model-config dense.json --dtype bf16 --tp 2 --dp 2", 4, 1);
  // Megatron's order: tp fastest. Ranks 0, 1 share a TP group; 0, 2 a DP group.
  EXPECT_EQ(e.groups.size(), 4u);
  EXPECT_EQ(e.groups["1"], json({0, 1}));
  EXPECT_EQ(e.groups["2"], json({0, 2}));
}

TEST(ChakraExport, PipelineOneForwardOneBackward) {
  const std::string dir = workload_fixture_dir();
  const auto e = export_and_check(dir, "--model-config dense.json --dtype bf16 --tp 2 --pp 2 --global-batch 4", 4, 2);
  // 4 micro-batches: the first stage sends 4 activations and receives 4 gradients.
  EXPECT_EQ(count_role(e.traces[0], "pp_send_fwd", pb::COMM_SEND_NODE), 4);
  EXPECT_EQ(count_role(e.traces[0], "pp_recv_bwd", pb::COMM_RECV_NODE), 4);
  // Tied embeddings: the first and last stage all-reduce the embedding gradient.
  EXPECT_EQ(count_role(e.traces[0], "embedding_allreduce_grad", pb::COMM_COLL_NODE), 1);
  EXPECT_EQ(count_role(e.traces[2], "embedding_allreduce_grad", pb::COMM_COLL_NODE), 1);
}

TEST(ChakraExport, ZeroOneWithOverlappedBuckets) {
  const std::string dir = workload_fixture_dir();
  const auto e = export_and_check(
      dir, "--model-config dense.json --dtype bf16 --dp 4 --zero 1 --dp-bucket-params 2M --overlap dp", 4, 1);
  // Buckets off the chain: some node waits on two others (the compute chain and a bucket).
  int64_t joins = 0;
  for (const auto& n : e.traces[0].nodes) joins += n.data_deps_size() > 1;
  EXPECT_GT(joins, 0);
  EXPECT_GT(count_role(e.traces[0], "dp_reducescatter_grad", pb::COMM_COLL_NODE), 1);
}

TEST(ChakraExport, ExpertParallelWithSequenceParallel) {
  const std::string dir = workload_fixture_dir();
  const auto e = export_and_check(dir, "--model-config moe.json --dtype bf16 --tp 2 --dp 2 --ep 2 --sp --overlap tp", 4,
                                  1);
  EXPECT_GT(count_role(e.traces[0], "ep_alltoall_dispatch_fwd", pb::COMM_COLL_NODE), 0);
}

TEST(ChakraExport, InterleavedScheduleAndContextParallelRing) {
  const std::string dir = workload_fixture_dir();
  // The interleaved schedule adds the first stage's receives from the last (predict counts one
  // message per micro-batch and direction), so only the trace checks apply.
  const auto e = export_and_check(dir,
                                  "--model-config dense.json --dtype bf16 --pp 2 --cp 2 --global-batch 4 --schedule "
                                  "interleaved --virtual-stages 2",
                                  4, 2, /*predicted=*/false);
  // 4 micro-batches x 2 chunks: every stage sends 8 activations forward or around.
  EXPECT_EQ(count_role(e.traces[0], "pp_send_fwd", pb::COMM_SEND_NODE), 8);
  EXPECT_EQ(count_role(e.traces[2], "pp_send_fwd", pb::COMM_SEND_NODE), 4);
  EXPECT_GT(count_role(e.traces[0], "cp_ring_fwd", pb::COMM_SEND_NODE), 0);
}

TEST(ChakraExport, AllowMissingLeavesOperationsOutAndSaysSo) {
  const std::string dir = workload_fixture_dir();
  // The folder measured non-causal attention only: a causal model's attention costs nothing.
  std::ofstream(dir + "/causal.json")
      << R"({"name": "test-causal", "source": "test fixture", "layers": 2, "hidden": 512, "heads": 8,
 "kv_heads": 4, "ffn": 1536, "gated": true, "vocab": 4096, "tied_embeddings": true, "causal": true, "seq": 1024})";
  std::string log;
  EXPECT_EQ(run_gpucal("export results --to chakra --model-config causal.json --dtype bf16 --dp 2 --out refused", log, dir), 2)
      << log;
  EXPECT_NE(log.find("export chakra refused: stage 0: attention"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir + "/refused/chakra/workload.0.et")) << log;
  EXPECT_EQ(run_gpucal("export results --to chakra --model-config causal.json --dtype bf16 --dp 2 --allow-missing --out out",
                       log, dir),
            0)
      << log;
  const std::string notes = read_text(dir + "/out/chakra/NOTES.md");
  EXPECT_NE(notes.find("INCOMPLETE: "), std::string::npos) << notes;
  EXPECT_NE(notes.find("left out (--allow-missing): stage 0: attention attn_fwd"), std::string::npos) << notes;
  const DecodedTrace t = read_trace(dir + "/out/chakra", 0);
  EXPECT_EQ(count_role(t, "attn_fwd", pb::COMP_NODE), 0);
  EXPECT_GT(count_role(t, "qkv_fwd", pb::COMP_NODE), 0);
  // Without --model there is no workload to leave operations out of.
  EXPECT_EQ(run_gpucal("export results --to astrasim --allow-missing --out out2", log, dir), 2) << log;
  EXPECT_NE(log.find("--allow-missing leaves a workload's operations out: it needs --model"), std::string::npos) << log;
}

TEST(ChakraExport, UsageErrors) {
  const std::string dir = workload_fixture_dir();
  std::string log;
  EXPECT_EQ(run_gpucal("export results --to chakra --out out", log, dir), 2);
  EXPECT_NE(log.find("--to chakra writes a workload: it needs --model"), std::string::npos) << log;
  // A hardware target takes --model too: its fields fitted to the step (tests/export/test_workload_fields.cpp).
  EXPECT_EQ(run_gpucal("export results --to astrasim --model-config dense.json --out out", log, dir), 0) << log;
  EXPECT_NE(read_text(dir + "/out/astrasim/NOTES.md").find("## Workload-aware fields"), std::string::npos);
  EXPECT_EQ(run_gpucal("export results --to all --tp 2 --out out", log, dir), 2);
  EXPECT_NE(log.find("--tp needs --model"), std::string::npos) << log;
  EXPECT_EQ(run_gpucal("export results --to chakra --model-config dense.json --tp 3 --out out", log, dir), 2) << log;
  // A trace that would grow past its bound is refused before it is built, naming the flags.
  EXPECT_EQ(run_gpucal("export results --to chakra --model-config dense.json --dtype bf16 --dp 2 --global-batch 1000000 --out big", log, dir), 2)
      << log;
  EXPECT_NE(log.find("lower --global-batch or raise --micro-batch"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir + "/big")) << log;
  // Without --model, --to all writes the hardware targets as before and no workload.
  run_gpucal("export results --to all --out out", log, dir);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/chakra")) << log;
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/astrasim/system.json")) << log;
}

}  // namespace
}  // namespace gpucal::calibration::testing
